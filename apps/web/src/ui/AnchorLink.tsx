import { Anchor, type AnchorProps } from '@mantine/core';
import { createLink, type LinkComponent } from '@tanstack/react-router';
import { forwardRef } from 'react';

type MantineAnchorProps = AnchorProps &
  Omit<React.AnchorHTMLAttributes<HTMLAnchorElement>, 'color' | 'style'>;

const MantineAnchor = forwardRef<HTMLAnchorElement, MantineAnchorProps>((props, ref) => (
  <Anchor ref={ref} {...props} />
));

const Created = createLink(MantineAnchor);

/** A Mantine Anchor that is a typed router link (`to`, `params`, `search`). */
export const AnchorLink: LinkComponent<typeof MantineAnchor> = (props) => (
  <Created preload="intent" {...props} />
);
