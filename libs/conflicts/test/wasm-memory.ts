/**
 * Automerge's WebAssembly memory, which it does not expose: caught as its module is
 * instantiated. Import this module before anything that loads Automerge.
 */
interface WasmMemory {
  buffer: ArrayBuffer;
}
interface Wasm {
  Instance: new (module: unknown, imports?: unknown) => { exports: Record<string, unknown> };
  Memory: abstract new (...args: never[]) => WasmMemory;
}
// The project's type libraries leave WebAssembly out; these are the two members used here.
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

let memory: WasmMemory | undefined;
const NativeInstance = wasm.Instance;
wasm.Instance = function Instance(module: unknown, imports?: unknown) {
  const instance = new NativeInstance(module, imports);
  for (const value of Object.values(instance.exports)) if (value instanceof wasm.Memory) memory = value;
  return instance;
} as unknown as Wasm['Instance'];

/** Bytes of Automerge's WebAssembly memory (0 before Automerge is first used). */
export const automergeMemoryBytes = (): number => memory?.buffer.byteLength ?? 0;
