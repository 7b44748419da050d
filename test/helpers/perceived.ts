// What a perceive answer shows of the page. Its `text` holds only the visible lines the
// snapshot does not already say (the words are never sent twice), so "the page
// shows X" reads the snapshot and the text together; a canary ("X never appears") must
// search both as well.

/** the snapshot, then the visible text lines it does not say */
export const shown = (p: { snapshot: string; text: string }): string => `${p.snapshot}\n${p.text}`
