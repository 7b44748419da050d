// The product's version, read once from package.json: the release a chart's appVersion
// and the images' tag name, and what the OpenAPI document, the MCP server and the daemon report.
import { readFileSync } from 'node:fs'

export const PRODUCT_VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version
