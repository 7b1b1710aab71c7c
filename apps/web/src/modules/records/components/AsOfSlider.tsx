import { Box, Slider, Text } from '@mantine/core';
import { useEffect, useMemo, useState } from 'react';
import { formatDateTime } from '../../../ui/utils/time';

/**
 * A slider over the record's change times, one mark per change and "Now" at the end: moving
 * it sets `asOf` to that change's time (the page then shows the fields as they were).
 * Keyboard arrows step from change to change.
 */
export function AsOfSlider({
  changeTimes,
  loading = false,
  asOf,
  onChange,
}: {
  /** Every change's time (ISO), any order. */
  changeTimes: readonly string[];
  /**
   * The changes are still being read: the slider takes its place, disabled, so the fields
   * below do not jump down under the pointer once they come.
   */
  loading?: boolean;
  asOf: string | undefined;
  onChange: (at: string | undefined) => void;
}) {
  const times = useMemo(
    () => [...new Set(changeTimes)].sort((a, b) => Date.parse(a) - Date.parse(b)),
    [changeTimes],
  );
  const now = times.length;
  const indexOf = (at: string | undefined): number => {
    if (at === undefined) return now;
    const asked = Date.parse(at);
    // The last change at or before the time asked (a URL may carry any time).
    let index = 0;
    for (const [i, time] of times.entries()) if (Date.parse(time) <= asked) index = i;
    return index;
  };
  const [value, setValue] = useState(() => indexOf(asOf));
  useEffect(() => setValue(indexOf(asOf)), [asOf, times]);

  if (loading)
    return (
      <Box px="xs" pt="xl" pb="md" aria-hidden data-testid="as-of-placeholder">
        <Slider min={0} max={1} value={1} disabled marks={[{ value: 1, label: 'Now' }]} />
        <Text size="xs" c="dimmed" mt="xl">
          Reading the record's changes…
        </Text>
      </Box>
    );
  if (times.length === 0) return null;
  const describe = (index: number) => {
    const time = times[index];
    return time === undefined ? 'Now' : formatDateTime(time);
  };
  return (
    <Box px="xs" pt="xl" pb="md">
      <Slider
        min={0}
        max={now}
        step={1}
        value={value}
        onChange={setValue}
        onChangeEnd={(index) => onChange(index >= now ? undefined : times[index])}
        marks={[...times.map((_, index) => ({ value: index })), { value: now, label: 'Now' }]}
        label={describe}
        thumbLabel="As of"
        thumbValueText={describe}
        thumbProps={{ 'aria-describedby': 'as-of-label' }}
      />
      <Text size="xs" c="dimmed" id="as-of-label" mt="xl">
        See the record as it was after each change (
        {times.length === 1 ? 'one change' : `${times.length} changes`} since {describe(0)})
      </Text>
    </Box>
  );
}
