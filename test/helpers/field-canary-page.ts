// The page the picture canaries (live view, video) fill: a text field and a password field
// far apart, sized to the secret, drawn without caret, outline or shadow so a field's pixels
// change only with its text, and a square that always animates, far from both, so the
// screencast keeps painting frames.

export function fieldCanaryPage(o: { title: string; secretLength: number; fontPx: number }): string {
  return `<!doctype html><html><head><title>${o.title}</title><style>
  html, body { margin: 0; background: #fff }
  input { position: absolute; left: 48px; width: ${o.secretLength + 1}ch; font: ${o.fontPx}px monospace; padding: 3px 4px; border: 2px solid #000;
          outline: none; caret-color: transparent; color: #000; background: #fff; box-shadow: none }
  #user { top: 96px }
  #pw { top: 288px }
  #tick { position: absolute; right: 48px; bottom: 48px; width: 64px; height: 64px; background: #c92a2a; animation: tick 0.5s steps(2) infinite }
  @keyframes tick { from { background: #c92a2a } to { background: #1864ab } }
</style></head><body>
  <input id="user" type="text" aria-label="User" autocomplete="off">
  <input id="pw" type="password" aria-label="Password" autocomplete="off">
  <div id="tick"></div>
</body></html>`
}
