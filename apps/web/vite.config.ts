import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Where the API listens in development (`npm run api` on PORT 3000 unless told otherwise).
const API = process.env.SYNCLINE_API_URL ?? 'http://127.0.0.1:3000';

// One origin in development as in production (sync-api serves dist): cookies and the
// event stream need no CORS. Routes are lazy (src/routes), so each page is its own chunk.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  server: {
    port: 5173,
    proxy: {
      '/api': { target: API, changeOrigin: false },
      '/webhooks': { target: API, changeOrigin: false },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    // The entry (React, Mantine, router, query) is ~200 KB gzipped; the budget is 250 KB.
    chunkSizeWarningLimit: 700,
  },
});
