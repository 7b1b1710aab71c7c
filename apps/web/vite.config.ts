import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { compression } from 'vite-plugin-compression2';

// Where the API listens in development (`npm run api` on PORT 3000 unless told otherwise).
const API = process.env.SYNCLINE_API_URL ?? 'http://127.0.0.1:3000';

// One origin in development as in production (sync-api serves dist): cookies and the
// event stream need no CORS. Routes are lazy (src/routes), so each page is its own chunk.
export default defineConfig({
  root: import.meta.dirname,
  // Brotli and gzip copies beside each script and style, for the API to send as they are
  // (serve-web-app.ts, preCompressed): no compression per request, and brotli at its best level.
  plugins: [
    react(),
    compression({ algorithms: ['brotliCompress', 'gzip'], include: /\.(js|css|html|svg)$/, threshold: 1024 }),
  ],
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
