// autocannon ships no types; the scripts use its callback API with loosely typed results.
declare module 'autocannon' {
  const autocannon: (
    opts: Record<string, unknown>,
    cb: (err: unknown, result: any) => void,
  ) => unknown;
  export default autocannon;
}
