// Tiny server-rendered HTML: an escaping tag function and one page layout.
import { revealHidden } from '../../contracts/person-text.ts'

export function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

/** A piece of markup that must not be escaped again. */
export class Html {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString() { return this.value }
}

/**
 * Text another party wrote (an agent's reason, a client's name, an identity's, network's or
 * key's name), as a person should read it: isolated in <bdi> (its own direction, never
 * reordering the page around it) and with any control, invisible or text-direction
 * character written out as [U+202E] (contracts/person-text.ts refuses them on input; a row
 * stored before that rule shows them instead of their effect).
 */
export function theirs(text: unknown): Html {
  return html`<bdi>${revealHidden(String(text ?? ''))}</bdi>`
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof Html ? x.value : esc(x))).join('') : v instanceof Html ? v.value : esc(v)
    out += part + strings[i + 1]
  })
  return new Html(out)
}

const STYLE = `
:root{--fg:#1d2330;--muted:#5d6679;--bg:#f6f7fb;--card:#fff;--line:#e2e5ee;--accent:#3b5bdb;--ok:#2b8a3e;--warn:#c92a2a}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:6px 16px;padding:12px 28px;background:#141a2a;color:#fff}
header nav{display:flex;flex-wrap:wrap;gap:2px 0}header .who{overflow-wrap:anywhere}
header nav a{color:#dfe6ff;text-decoration:none}header nav a:hover{text-decoration:underline}
header .brand{font-weight:650;letter-spacing:.3px}header form{margin:0}header .who{color:#c5cbe0;margin-right:12px;font-size:14px}
main{max-width:880px;margin:28px auto;padding:0 20px;overflow-wrap:break-word}h1{font-size:22px;margin:0 0 16px}h2{font-size:17px;margin:0 0 12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:20px 22px;margin-bottom:20px;box-shadow:0 1px 2px rgba(20,26,42,.04)}
label{display:block;font-weight:600;margin:12px 0 4px}input[type=text],input[type=email],input[type=password],select{width:100%;padding:8px 10px;border:1px solid var(--line);border-radius:6px;font:inherit}
.scopes{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:6px 14px;margin-top:6px}
.scopes label{font-weight:400;margin:0;display:flex;gap:6px;align-items:center}.scopes label.disabled{color:#a0a6b5}
button{background:var(--accent);color:#fff;border:0;border-radius:6px;padding:8px 16px;font:inherit;font-weight:600;cursor:pointer;margin-top:16px}
button.link{background:none;color:#c5cbe0;padding:0;margin:0;font-weight:400}
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:8px 6px;border-bottom:1px solid var(--line);font-size:14px;vertical-align:top}
th{color:var(--muted);font-weight:600}code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#eef0f6;padding:1px 5px;border-radius:4px}
.secret{display:block;padding:10px 12px;margin:8px 0;background:#fff9db;border:1px solid #ffe066;border-radius:6px;word-break:break-all}
.error{color:var(--warn);font-weight:600}.muted{color:var(--muted)}.ok{color:var(--ok);font-weight:600}
.hosts{list-style:none;margin:6px 0;padding:0}.hosts li{margin:0 0 8px}
td code{overflow-wrap:anywhere}
.host{display:inline-block;max-width:100%;vertical-align:top;margin-right:10px}.host-site{font-weight:700;font-size:16px}
.host-full{display:block;width:fit-content;max-width:100%;margin-top:2px;font-size:12px;color:var(--muted);white-space:normal;overflow-wrap:anywhere}.host-full b{color:var(--fg)}
@media (max-width:600px){header{padding:10px 14px}main{margin:16px auto;padding:0 12px}.card{padding:14px}}
blockquote{margin:8px 0;padding:8px 12px;border-left:3px solid var(--line);background:#fafbfd}
`

/** the console's sections, in the header of every signed-in page */
const SECTIONS: Array<[string, string]> = [['/sessions', 'Sessions'], ['/recordings', 'Recordings'], ['/identities', 'Identities'], ['/networks', 'Networks'], ['/reach', 'Local reach'], ['/keys', 'API keys'], ['/governance', 'Governance']]

export function page(title: string, body: Html, opts: { user?: { email: string; orgName: string }; logoutAction?: string; csrf?: string; consoleBase?: string } = {}): string {
  const nav = opts.user && opts.consoleBase !== undefined
    ? html`<nav>${SECTIONS.map(([path, label]) => html`<a href="${opts.consoleBase}${path}" style="margin-right:12px">${label}</a>`)}</nav>`
    : html``
  const who = opts.user
    ? html`<div><span class="who">${opts.user.email} · ${opts.user.orgName}</span><form method="post" action="${opts.logoutAction}" style="display:inline"><input type="hidden" name="csrf" value="${opts.csrf}"><button class="link" type="submit">Sign out</button></form></div>`
    : html``
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)} · Nightjar</title><style>${STYLE}</style></head>
<body><header><span class="brand">Nightjar</span>${nav}${who}</header><main>${body}</main></body></html>`
}
