import { type CSSVariablesResolver, createTheme } from '@mantine/core';

/** Mantine's defaults with contrast for WCAG AA: darker primary buttons and dimmed text. */
export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 8, dark: 8 },
  defaultRadius: 'md',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
});

export const cssVariablesResolver: CSSVariablesResolver = (t) => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': t.colors.gray[7] ?? '#495057',
    '--mantine-color-placeholder': t.colors.gray[6] ?? '#868e96',
  },
  dark: {},
});
