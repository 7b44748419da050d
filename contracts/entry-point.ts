// "Was this module started directly (node --import tsx file.ts), not imported?"
import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

export function isEntryPoint(moduleUrl: string): boolean {
  try {
    return !!process.argv[1] && moduleUrl === pathToFileURL(realpathSync(process.argv[1])).href
  } catch {
    return false
  }
}
