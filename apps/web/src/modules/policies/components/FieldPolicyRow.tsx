import { Paper, Select, Stack } from '@mantine/core';
import { type Policy, type PolicyKind, STRATEGIES } from '../utils/policy-draft';
import { PriorityOrder } from './PriorityOrder';

/** One field: its strategy (only those it may take), what that means, and a priority's order. */
export function FieldPolicyRow({
  label,
  policy,
  strategies,
  changed,
  error,
  nameOf,
  completeOrder,
  onChange,
  onKind,
}: {
  label: string;
  policy: Policy;
  strategies: readonly PolicyKind[];
  changed: boolean;
  error: string | undefined;
  nameOf: (source: string) => string;
  /** The order as shown: every source placed. */
  completeOrder: (order: readonly string[]) => string[];
  onChange: (policy: Policy) => void;
  onKind: (kind: PolicyKind) => void;
}) {
  return (
    <Paper
      withBorder
      p="sm"
      data-field-policy={label}
      style={changed ? { borderColor: 'var(--mantine-color-blue-7)' } : undefined}
    >
      <Stack gap="xs">
        <Select
          label={label}
          description={STRATEGIES[policy.kind].meaning}
          data={strategies.map((kind) => ({ value: kind, label: STRATEGIES[kind].label }))}
          value={policy.kind}
          allowDeselect={false}
          onChange={(value) => value !== null && onKind(value as PolicyKind)}
          error={error}
          // Mantine's red error text misses 4.5:1 on white: a darker red.
          styles={{ error: { color: 'var(--mantine-color-red-9)' } }}
          maw={420}
          comboboxProps={{ withinPortal: true }}
        />
        {policy.kind === 'priority' && (
          <PriorityOrder
            fieldLabel={label}
            order={completeOrder(policy.order)}
            nameOf={nameOf}
            onChange={(order) => onChange({ kind: 'priority', order })}
          />
        )}
      </Stack>
    </Paper>
  );
}
