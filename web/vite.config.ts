import { defineConfig } from "vitest/config";
import preact from "@preact/preset-vite";

// The UI is served by longhauld from web/dist (compiled into the binary); `npm run dev`
// proxies the API to a longhauld on 127.0.0.1:8080.
export default defineConfig({
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false })],
  base: "/",
  build: {
    outDir: "dist",
    assetsDir: "assets",
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  server: { proxy: { "/api": "http://127.0.0.1:8080" } },
  test: { include: ["src/**/*.test.ts"], environment: "node" },
});
