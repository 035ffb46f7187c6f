/** @module engines/espeak/espeak-ng-emscripten — the untyped package's module factory; worker.ts types what it uses. */
declare module '@echogarden/espeak-ng-emscripten' {
  const factory: () => Promise<unknown>;
  export default factory;
}
