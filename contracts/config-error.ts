// A configuration the process refuses to start with. The CLI prints its message and
// exits 2; every component (api-server, operator, browser pod) throws this one class.
export class ConfigError extends Error {
  override name = 'ConfigError'
}
