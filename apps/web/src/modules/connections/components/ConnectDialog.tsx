import {
  Alert,
  Anchor,
  Button,
  Checkbox,
  Collapse,
  Group,
  Modal,
  PasswordInput,
  Radio,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useState } from 'react';
import { describeError } from '../../../api/errors';
import {
  type Connection,
  type OAuthProduct,
  type OAuthProvider,
  useConnectWithToken,
  useStartOAuth,
} from '../api';

type Suite = Exclude<OAuthProvider, 'hubspot'>;

/** The products one sign-in connects, per suite. */
const PRODUCTS: Record<Suite, { value: OAuthProduct; label: string; description: string }[]> = {
  google: [
    {
      value: 'google-calendar',
      label: 'Calendar',
      description: 'Meetings, on the records of the people in them',
    },
    { value: 'gmail', label: 'Gmail', description: 'Emails with your contacts, on their timelines' },
    { value: 'google-tasks', label: 'Tasks', description: 'Tasks, both ways' },
  ],
  microsoft: [
    {
      value: 'microsoft-calendar',
      label: 'Outlook Calendar',
      description: 'Meetings, on the records of the people in them',
    },
    {
      value: 'microsoft-mail',
      label: 'Outlook Mail',
      description: 'Emails with your contacts, on their timelines',
    },
    { value: 'microsoft-todo', label: 'To Do', description: 'Tasks, both ways' },
  ],
};

const PROVIDER_LABELS: Record<OAuthProvider, string> = {
  hubspot: 'HubSpot',
  google: 'Google',
  microsoft: 'Microsoft',
};

/** Where the provider's consent page sends the browser back to. */
export const CONNECT_RETURN_TO = '/admin/connections';
/** The same for a reconnect, so the page can say the connection is back rather than new. */
export const RECONNECT_RETURN_TO = '/admin/connections?reconnect=1';

/**
 * Connect HubSpot, Google or Microsoft 365 (with its products) through the provider's consent page, in dry
 * run if asked; or a HubSpot portal by a private app's token.
 */
export function ConnectDialog({
  opened,
  onClose,
  onConnectedWithToken,
}: {
  opened: boolean;
  onClose: () => void;
  onConnectedWithToken: (connection: Connection) => void;
}) {
  const [provider, setProvider] = useState<OAuthProvider>('hubspot');
  const [products, setProducts] = useState<OAuthProduct[]>([]);
  const [dryRun, setDryRun] = useState(false);
  const [withToken, setWithToken] = useState(false);
  const [portalId, setPortalId] = useState('');
  const [token, setToken] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [tried, setTried] = useState(false);
  const start = useStartOAuth();
  const byToken = useConnectWithToken();

  const suite: Suite | null = provider === 'hubspot' ? null : provider;
  const noProduct = suite !== null && products.length === 0;
  const portalInvalid = !/^\d{1,20}$/.test(portalId.trim());
  const tokenMissing = token.trim() === '';
  const error = start.error ?? byToken.error;
  const providerLabel = PROVIDER_LABELS[provider];

  const close = () => {
    start.reset();
    byToken.reset();
    setTried(false);
    setToken('');
    onClose();
  };

  const consent = () => {
    setTried(true);
    if (noProduct) return;
    start.mutate(
      {
        provider,
        dryRun,
        returnTo: CONNECT_RETURN_TO,
        ...(suite !== null ? { products } : {}),
      },
      { onSuccess: ({ authorizeUrl }) => window.location.assign(authorizeUrl) },
    );
  };

  const connectWithToken = () => {
    setTried(true);
    if (portalInvalid || tokenMissing) return;
    byToken.mutate(
      {
        portalId: portalId.trim(),
        token: token.trim(),
        displayName: displayName.trim() || undefined,
        dryRun,
      },
      {
        onSuccess: (connection) => {
          setToken('');
          setPortalId('');
          setDisplayName('');
          setWithToken(false);
          setTried(false);
          onConnectedWithToken(connection);
        },
      },
    );
  };

  return (
    <Modal
      opened={opened}
      onClose={close}
      title="Connect a system"
      centered
      size="lg"
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      <Stack gap="md">
        <Radio.Group
          label="System"
          value={provider}
          onChange={(value) => {
            const next: OAuthProvider = value === 'google' || value === 'microsoft' ? value : 'hubspot';
            setProvider(next);
            // Each suite starts with its calendar chosen.
            setProducts(next === 'hubspot' ? [] : [PRODUCTS[next][0]!.value]);
            setWithToken(false);
            setTried(false);
          }}
        >
          <Group mt="xs" gap="lg">
            <Radio value="hubspot" label="HubSpot" />
            <Radio value="google" label="Google" />
            <Radio value="microsoft" label="Microsoft 365" />
          </Group>
        </Radio.Group>

        {suite !== null && (
          <Checkbox.Group
            label="What to sync"
            description={`One ${providerLabel} sign-in connects each product you choose.`}
            value={products}
            onChange={(value) => setProducts(value as OAuthProduct[])}
            error={tried && noProduct ? 'Choose at least one product.' : undefined}
          >
            <Stack mt="xs" gap="xs">
              {PRODUCTS[suite].map((p) => (
                <Checkbox key={p.value} value={p.value} label={p.label} description={p.description} />
              ))}
            </Stack>
          </Checkbox.Group>
        )}

        <Checkbox
          checked={dryRun}
          onChange={(event) => setDryRun(event.currentTarget.checked)}
          label="Try in dry run first"
          description="Read everything and report what would change; nothing is written to any system until you enable it."
        />

        {error !== null && (
          <Alert color="red" variant="light" title={describeError(error).title} role="alert">
            <Text size="sm" c="dark.7">
              {describeError(error).message}
            </Text>
          </Alert>
        )}

        {!withToken && (
          <Stack gap="xs">
            <Text size="sm">
              You will be sent to {providerLabel} to choose the account and allow access, then brought back
              here.
            </Text>
            <Group justify="space-between">
              {provider === 'hubspot' ? (
                <Anchor component="button" type="button" size="sm" onClick={() => setWithToken(true)}>
                  Use a token instead
                </Anchor>
              ) : (
                <span />
              )}
              <Group gap="sm">
                <Button variant="default" onClick={close}>
                  Cancel
                </Button>
                <Button color="blue.8" onClick={consent} loading={start.isPending}>
                  Continue to {providerLabel}
                </Button>
              </Group>
            </Group>
          </Stack>
        )}

        <Collapse expanded={withToken}>
          <Stack gap="sm">
            <Text size="sm">
              A HubSpot private app's access token (Settings → Integrations → Private apps) connects the
              portal without a consent page. Syncline checks with HubSpot that the token opens this portal.
            </Text>
            <TextInput
              label="Portal ID"
              description="The Hub ID shown in HubSpot's account menu."
              inputMode="numeric"
              value={portalId}
              onChange={(event) => setPortalId(event.currentTarget.value)}
              error={tried && portalInvalid ? 'Enter the portal ID: digits only.' : undefined}
              required
            />
            <PasswordInput
              label="Private app token"
              autoComplete="off"
              value={token}
              onChange={(event) => setToken(event.currentTarget.value)}
              error={tried && tokenMissing ? 'Paste the token.' : undefined}
              required
            />
            <TextInput
              label="Name (optional)"
              description='How pages name it, e.g. "CRM EMEA".'
              value={displayName}
              onChange={(event) => setDisplayName(event.currentTarget.value)}
            />
            <Group justify="space-between">
              <Anchor component="button" type="button" size="sm" onClick={() => setWithToken(false)}>
                Use the consent page instead
              </Anchor>
              <Group gap="sm">
                <Button variant="default" onClick={close}>
                  Cancel
                </Button>
                <Button color="blue.8" onClick={connectWithToken} loading={byToken.isPending}>
                  Connect with token
                </Button>
              </Group>
            </Group>
          </Stack>
        </Collapse>
      </Stack>
    </Modal>
  );
}
