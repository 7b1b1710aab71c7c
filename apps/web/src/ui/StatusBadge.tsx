import { Badge, type BadgeProps } from '@mantine/core';

/** Tones, not colours: each keeps its text dark enough on its light background (WCAG AA). */
export type Tone = 'neutral' | 'info' | 'success' | 'warning' | 'danger';

const TONE_COLOR: Record<Tone, string> = {
  neutral: 'gray',
  info: 'blue',
  success: 'green',
  warning: 'orange',
  danger: 'red',
};

/**
 * The tone is the background; the text is near-black on every one of them, since Mantine's
 * orange and green text shades miss 4.5:1 on their own light backgrounds at badge sizes.
 */
export function toneProps(tone: Tone): Pick<BadgeProps, 'color' | 'variant' | 'c'> {
  return { color: TONE_COLOR[tone], variant: 'light', c: 'dark.7' };
}

/** A short status word (open, merged, Live, Error…) in its tone. */
export function StatusBadge({
  label,
  tone = 'neutral',
  size = 'sm',
}: {
  label: string;
  tone?: Tone;
  size?: BadgeProps['size'];
}) {
  return (
    <Badge size={size} {...toneProps(tone)}>
      {label}
    </Badge>
  );
}
