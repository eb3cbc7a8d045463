import { defineConfig } from 'vite';

// The page is served by a2a_grpc/console (standalone at /, or mounted under a
// prefix), so every URL it uses is relative: assets ('./') and the API ('api/…').
// `npm run dev` proxies the API to a console started with `a2a-grpc console URL`.
export default defineConfig({
  base: './',
  build: {
    outDir: '../a2a_grpc/console/static',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8090' } },
});
