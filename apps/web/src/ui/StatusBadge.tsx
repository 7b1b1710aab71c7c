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

/** Text on its tone's light background, shade 9 so that small capitals stay readable. */
export function toneProps(tone: Tone): Pick<BadgeProps, 'color' | 'variant' | 'c'> {
  const color = TONE_COLOR[tone];
  return { color, variant: 'light', c: `${color}.9` };
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
