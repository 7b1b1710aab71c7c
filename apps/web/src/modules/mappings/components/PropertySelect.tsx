import { Select, type SelectProps } from '@mantine/core';
import { useMemo } from 'react';
import type { PortalProperty } from '../api';

type Group = { group: string; items: { value: string; label: string; disabled?: boolean }[] };

/** The option's words: name, type, and why it cannot be picked or who has it already. */
function optionLabel(p: PortalProperty, fits: boolean, usedBy: string | undefined): string {
  const name = p.label === p.name ? p.name : `${p.label} (${p.name})`;
  const note = p.reserved
    ? ' · reserved'
    : !fits
      ? ' · wrong type for this field'
      : usedBy !== undefined
        ? ` · used by ${usedBy}`
        : '';
  return `${name} · ${p.type}${note}`;
}

/** Mantine's error red (red.6) misses 4.5:1 on white; red.9 keeps the tone at AA. */
export const ERROR_CONTRAST = {
  '--mantine-color-error': 'var(--mantine-color-red-9)',
} as React.CSSProperties;

/**
 * The portal's properties as a searchable select, custom ones first. A property whose type
 * cannot carry the field, or that HubSpot or Syncline keep, is shown but cannot be picked; the
 * API still checks every choice.
 */
export function PropertySelect({
  properties,
  accepted,
  value,
  onChange,
  usedBy,
  style,
  ...props
}: {
  properties: readonly PortalProperty[] | undefined;
  /** The property types that can carry the field; undefined while unknown. */
  accepted: readonly string[] | undefined;
  value: string | null;
  onChange: (property: string) => void;
  /** Properties other fields of the type have in the draft, with the field's name. */
  usedBy?: ReadonlyMap<string, string>;
} & Omit<SelectProps, 'data' | 'value' | 'onChange'>) {
  const data = useMemo((): Group[] => {
    const item = (p: PortalProperty) => {
      const fits = accepted === undefined || accepted.includes(p.type);
      return {
        value: p.name,
        label: optionLabel(p, fits, p.name === value ? undefined : usedBy?.get(p.name)),
        disabled: p.reserved || !fits,
      };
    };
    const list = properties ?? [];
    const groups: Group[] = [
      { group: 'Custom properties', items: list.filter((p) => p.custom).map(item) },
      { group: "HubSpot's properties", items: list.filter((p) => !p.custom).map(item) },
    ];
    if (value !== null && value !== '' && !list.some((p) => p.name === value))
      groups.push({
        group: properties === undefined ? 'Current' : 'Not in the portal',
        items: [{ value, label: value }],
      });
    return groups.filter((g) => g.items.length > 0);
  }, [properties, accepted, value, usedBy]);
  return (
    <Select
      searchable
      data={data}
      value={value}
      onChange={(next) => next !== null && onChange(next)}
      nothingFoundMessage="No property by that name"
      maxDropdownHeight={280}
      comboboxProps={{ withinPortal: true }}
      style={{ ...ERROR_CONTRAST, ...(style as React.CSSProperties | undefined) }}
      {...props}
    />
  );
}
