import {
  Alert,
  Anchor,
  Autocomplete,
  Box,
  Button,
  Group,
  Loader,
  Stack,
  Text,
  TextInput,
  VisuallyHidden,
} from '@mantine/core';
import { describeError } from '../../../api/errors';
import type { FieldSpec } from '../../../lib/fields';
import { ProvenanceBadge, type ProvenanceSource } from '../../../ui/ProvenanceBadge';
import type { Provenance, RecordType, RecordView } from '../api';
import { useFieldEdit } from '../hooks/useFieldEdit';
import { CALLOUT_STYLES, EMPTY_VALUE, formatValue, fromInputText } from '../utils/format';

export interface FieldRowProps {
  type: RecordType;
  field: string;
  label: string;
  value: unknown;
  provenance: Provenance | undefined;
  sourceOf: (provenance: Provenance) => ProvenanceSource;
  /** An open conflict waits on this field. */
  inConflict?: boolean;
}

/**
 * One field: its label, value and where the value came from. A `group` named by the label,
 * so tests and assistive technology find a field by its name.
 */
function FieldFrame({
  label,
  children,
  actions,
}: {
  label: string;
  children: React.ReactNode;
  actions?: React.ReactNode;
}) {
  return (
    <Box
      role="group"
      aria-label={label}
      py="xs"
      style={{ borderBottom: '1px solid var(--mantine-color-default-border)' }}
    >
      <Group justify="space-between" align="flex-start" gap="xs" wrap="wrap">
        <Stack gap={2} style={{ flex: '1 1 16rem', minWidth: 0 }}>
          <Text size="xs" fw={600} c="dimmed" aria-hidden>
            {label}
          </Text>
          {children}
        </Stack>
        {actions}
      </Group>
    </Box>
  );
}

function Value({ type, field, value }: { type: RecordType; field: string; value: unknown }) {
  const text = formatValue(type, field, value);
  return (
    <Text size="sm" c={text === EMPTY_VALUE ? 'dimmed' : undefined} style={{ overflowWrap: 'anywhere' }}>
      {text === EMPTY_VALUE ? (
        <>
          <span aria-hidden>{EMPTY_VALUE}</span>
          <VisuallyHidden>No value</VisuallyHidden>
        </>
      ) : (
        text
      )}
    </Text>
  );
}

function Badge({
  provenance,
  sourceOf,
}: {
  provenance: Provenance | undefined;
  sourceOf: FieldRowProps['sourceOf'];
}) {
  if (provenance === undefined) return null;
  return (
    <ProvenanceBadge
      source={sourceOf(provenance)}
      eventTime={provenance.eventTime}
      conflicted={provenance.conflicted}
    />
  );
}

/** A field as it was at some time: read-only. */
export function ReadOnlyFieldRow({ type, field, label, value, provenance, sourceOf }: FieldRowProps) {
  return (
    <FieldFrame label={label}>
      <Value type={type} field={field} value={value} />
      <Badge provenance={provenance} sourceOf={sourceOf} />
    </FieldFrame>
  );
}

function FieldInput({
  spec,
  label,
  value,
  onChange,
  error,
  disabled,
}: {
  spec: FieldSpec;
  label: string;
  value: string;
  onChange: (text: string) => void;
  error: string | null;
  disabled: boolean;
}) {
  const common = {
    label,
    value,
    error,
    disabled,
    'data-autofocus': true,
    autoFocus: true,
    size: 'sm',
  } as const;
  if (spec.input === 'suggest')
    return <Autocomplete {...common} data={[...(spec.suggestions ?? [])]} onChange={onChange} />;
  const htmlType =
    spec.input === 'datetime'
      ? 'datetime-local'
      : spec.input === 'email' || spec.input === 'tel'
        ? spec.input
        : 'text';
  return (
    <TextInput
      {...common}
      type={htmlType}
      inputMode={spec.input === 'number' ? 'decimal' : undefined}
      onChange={(event) => onChange(event.currentTarget.value)}
    />
  );
}

/** A current field: its value, provenance and inline edit (with the 202 and 412 answers). */
export function FieldRow(props: FieldRowProps & { record: RecordView }) {
  const { type, field, label, value, provenance, sourceOf, record, inConflict = false } = props;
  const { state, spec, start, change, save, cancel, keepTheirs, applyMine } = useFieldEdit(
    type,
    record,
    field,
  );

  if (state.mode === 'editing' || state.mode === 'saving') {
    const saving = state.mode === 'saving';
    const error =
      state.mode === 'editing' && state.error !== null ? describeError(state.error).message : null;
    return (
      <FieldFrame label={label}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <Stack gap="xs">
            <FieldInput
              spec={spec}
              label={label}
              value={state.draft.text}
              onChange={change}
              error={error}
              disabled={saving}
            />
            <Group gap="xs">
              <Button type="submit" size="xs" loading={saving}>
                Save
              </Button>
              <Button type="button" size="xs" variant="default" onClick={cancel} disabled={saving}>
                Cancel
              </Button>
            </Group>
          </Stack>
        </form>
      </FieldFrame>
    );
  }

  if (state.mode === 'stale') {
    const error = state.error !== null ? describeError(state.error).message : null;
    const draftValue = fromInputText(spec, state.draft.text);
    return (
      <FieldFrame label={label}>
        <Alert
          color="orange"
          variant="light"
          styles={CALLOUT_STYLES}
          title={`${label} was changed by someone else`}
          role="region"
          aria-label={`${label} changed meanwhile`}
        >
          <Stack gap="sm">
            <Group align="flex-start" gap="lg" wrap="wrap">
              <Stack gap={2} role="group" aria-label="Their value" style={{ flex: '1 1 12rem', minWidth: 0 }}>
                <Text size="xs" fw={600}>
                  Their value
                </Text>
                <Value type={type} field={field} value={value} />
                <Badge provenance={provenance} sourceOf={sourceOf} />
              </Stack>
              <Stack gap={2} role="group" aria-label="Your draft" style={{ flex: '1 1 12rem', minWidth: 0 }}>
                <Text size="xs" fw={600}>
                  Your draft
                </Text>
                <Value type={type} field={field} value={draftValue} />
              </Stack>
            </Group>
            {error !== null && (
              <Text size="sm" c="red.8" role="alert">
                {error}
              </Text>
            )}
            <Group gap="xs">
              <Button size="xs" variant="default" onClick={keepTheirs} disabled={state.applying}>
                Keep theirs
              </Button>
              <Button size="xs" onClick={applyMine} loading={state.applying}>
                Apply mine
              </Button>
            </Group>
          </Stack>
        </Alert>
      </FieldFrame>
    );
  }

  if (state.mode === 'pending')
    return (
      <FieldFrame label={label}>
        <Value type={type} field={field} value={fromInputText(spec, state.text)} />
        <Group gap={6} role="status">
          <Loader size={12} aria-hidden />
          <Text size="xs" c="dimmed">
            {state.slow ? 'Saving… the sync is behind; your edit appears once it is merged.' : 'Saving…'}
          </Text>
        </Group>
      </FieldFrame>
    );

  return (
    <FieldFrame
      label={label}
      actions={
        <Button size="xs" variant="subtle" onClick={start} aria-label={`Edit ${label}`}>
          Edit
        </Button>
      }
    >
      <Value type={type} field={field} value={value} />
      <Group gap={6}>
        <Badge provenance={provenance} sourceOf={sourceOf} />
        {inConflict && (
          <Anchor href="#open-conflicts" size="xs" c="blue.9" fw={600}>
            Open conflict: decide
          </Anchor>
        )}
      </Group>
    </FieldFrame>
  );
}
