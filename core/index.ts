// The public entry of core/: the only module electron/ may import.
export { createService, type Service, type ServiceOptions } from './service';
