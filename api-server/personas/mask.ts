// The only form of a credential value that ever leaves the service.
const BULLETS = '••••••••'

/**
 * Bullets plus the last 4 characters. The bullet count is fixed so the mask does not
 * leak the length; a value shorter than 8 characters shows no characters at all,
 * because 4 of 7 would reveal most of the secret.
 */
export function maskValue(value: string): string {
  const chars = Array.from(value) // code points, so an emoji is never split in half
  return chars.length >= 8 ? BULLETS + chars.slice(-4).join('') : BULLETS
}

/** A TOTP seed shows nothing: its last characters are part of the secret a code is made from. */
export function maskFor(kind: 'password' | 'totp', value: string): string {
  return kind === 'totp' ? BULLETS : maskValue(value)
}
