import { Alert, type CSSVariablesResolver, createTheme, Modal, Notification } from '@mantine/core';

/** Mantine's defaults with contrast for WCAG AA: darker primary buttons and dimmed text. */
export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: 'md',
  // Dialogs and menus appear without their transitions for people who ask for less motion.
  respectReducedMotion: true,
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  components: {
    // Callout titles in the text colour: red.6 and orange.6 on white miss 4.5:1; the border keeps the tone.
    Alert: Alert.extend({ styles: { title: { color: 'var(--mantine-color-text)' } } }),
    // Dialogs: a named close button (Mantine leaves it unnamed; a dialog may still name its own).
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close dialog' } } }),
    // Toasts: a named close button, and the message in body text rather than grey.
    Notification: Notification.extend({
      defaultProps: { closeButtonProps: { 'aria-label': 'Dismiss notification' } },
      styles: { description: { color: 'var(--mantine-color-text)' } },
    }),
  },
});

export const cssVariablesResolver: CSSVariablesResolver = (t) => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': t.colors.gray[7] ?? '#495057',
    '--mantine-color-placeholder': t.colors.gray[6] ?? '#868e96',
    // Field errors and error text everywhere: red.6 on white misses 4.5:1, red.9 meets it.
    '--mantine-color-error': t.colors.red[9] ?? '#c92a2a',
  },
  dark: {},
});
