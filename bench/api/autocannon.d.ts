// The part of autocannon 9's API the bench uses (the package ships no type declarations).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    max: number;
    /** Count of samples (for `requests`: all responses). */
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    workers?: number;
    headers?: Record<string, string>;
    tlsOptions?: { ca?: string };
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
