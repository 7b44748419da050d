// The console's Governance page: the org's flags — free-text credential
// fill, cloak sessions, the declared advisor origins, recording every session by default, the
// allowlist of upstream proxy hosts (docs/proxy.md) — read with governance_get and saved
// with governance_put. Both need org:admin (owners and admins); anyone else gets the
// API's 403 in words.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApiError } from '../../contracts/errors.ts'
import { governanceGet, governancePut } from '../operations/personas/governance.ts'
import { Html, html, page } from '../door-kit/html.ts'
import type { ConsoleUser } from '../door-kit/console-session.ts'
import { csrfInput, errorLine, field, formRoute, listField, notice, okNotice, pageRoute, refusalPage, runOp, setupNav, TEXTAREA_STYLE, type SetupKit } from './setup-kit.ts'
import { VIDEO_DEFAULT_FPS } from '../recordings/video.ts'

export function registerGovernancePage(app: FastifyInstance, kit: SetupKit) {
  const path = `${kit.base}/governance`

  const show = async (req: FastifyRequest, reply: FastifyReply, u: ConsoleUser, o: { error?: ApiError; origins?: string; proxies?: string; videoMaxSeconds?: string; videoMaxMiB?: string } = {}) => {
    let g
    try {
      g = await runOp(kit.services, req, u, governanceGet, {})
    } catch (e) {
      return refusalPage(kit, reply, u, 'Governance', e, { href: `${kit.base}/identities`, text: 'Identities' })
    }
    const checked = (b: boolean) => new Html(b ? 'checked' : '')
    return kit.send(o.error ? reply.headers(o.error.headers) : reply, o.error?.status ?? 200, page('Governance', html`
      <h1>Governance</h1>
      ${setupNav(kit)}
      ${okNotice(notice(req, { saved: 'Governance saved.' }))}
      <div class="card" id="governance">
        <p class="muted">Org-wide rules for ${u.orgName}. Changes are audited.</p>
        ${errorLine(o.error?.message)}
        <form method="post" action="${path}" id="governance-form">${csrfInput(kit, u)}
          <label style="font-weight:400"><input type="checkbox" name="credential_freetext_fill" value="on" ${checked(g.credential_freetext_fill)}>
            Free-text credential fill: an agent may type <code>{{credential:&lt;name&gt;}}</code> placeholders into any editable field, not only password fields</label>
          <label style="font-weight:400"><input type="checkbox" name="cloakEnabled" value="on" ${checked(g.cloakEnabled)}> Cloak sessions enabled</label>
          <label style="font-weight:400"><input type="checkbox" name="recordSessions" value="on" ${checked(g.recordSessions)}> Record every session by default
            <span class="muted">(a start may still say <code>record: false</code>; recordings are kept ${kit.services.config.recordings.retentionDays} days)</span></label>
          <label style="font-weight:400"><input type="checkbox" name="videoSessions" value="on" ${checked(g.videoSessions)}> Record every session as video by default
            <span class="muted">(WebM, ${VIDEO_DEFAULT_FPS} frames a second; a start may still say <code>video: false</code>; kept as long as recordings)</span></label>
          <label for="video-max-seconds">Longest video, in seconds <span class="muted">(empty: the platform's ${Math.round(kit.services.config.video.maxDurationMs / 1000)}; the lower applies)</span></label>
          <input id="video-max-seconds" name="videoMaxSeconds" inputmode="numeric" value="${o.videoMaxSeconds ?? (g.videoMaxSeconds === null ? '' : String(g.videoMaxSeconds))}">
          <label for="video-max-mib">Largest video, in MiB <span class="muted">(empty: the platform's ${Math.round(kit.services.config.video.maxBytes / 2 ** 20)}; the lower applies)</span></label>
          <input id="video-max-mib" name="videoMaxMiB" inputmode="numeric" value="${o.videoMaxMiB ?? (g.videoMaxMiB === null ? '' : String(g.videoMaxMiB))}">
          <label for="advisor-origins">Declared advisor origins <span class="muted">(http(s)://host[:port], one per line)</span></label>
          <textarea id="advisor-origins" name="declaredAdvisorOrigins" rows="3" style="${TEXTAREA_STYLE}">${o.origins ?? g.declaredAdvisorOrigins.join('\n')}</textarea>
          <label for="proxy-hosts">Allowed upstream proxy hosts <span class="muted">(host[:port], one per line, matched exactly; empty: sessions may not use a proxy)</span></label>
          <textarea id="proxy-hosts" name="proxyHosts" rows="3" style="${TEXTAREA_STYLE}">${o.proxies ?? g.proxyHosts.join('\n')}</textarea>
          <button type="submit">Save governance</button>
        </form>
      </div>`, kit.chrome(u)))
  }

  pageRoute(app, kit, path, (req, reply, u) => show(req, reply, u))

  formRoute(app, kit, path,
    async ({ req, u, body }) => {
      await runOp(kit.services, req, u, governancePut, {
        // an unticked box is not sent: false
        credential_freetext_fill: field(body, 'credential_freetext_fill') === 'on',
        cloakEnabled: field(body, 'cloakEnabled') === 'on',
        recordSessions: field(body, 'recordSessions') === 'on',
        videoSessions: field(body, 'videoSessions') === 'on',
        videoMaxSeconds: boundField(body, 'videoMaxSeconds'),
        videoMaxMiB: boundField(body, 'videoMaxMiB'),
        declaredAdvisorOrigins: listField(body, 'declaredAdvisorOrigins'),
        proxyHosts: listField(body, 'proxyHosts'),
      })
      return `${path}?done=saved`
    },
    ({ req, reply, u, body }, e) =>
      e.status === 403 ? refusalPage(kit, reply, u, 'Governance', e, { href: `${kit.base}/identities`, text: 'Identities' }) : show(req, reply, u, { error: e, origins: field(body, 'declaredAdvisorOrigins'), proxies: field(body, 'proxyHosts'), videoMaxSeconds: field(body, 'videoMaxSeconds'), videoMaxMiB: field(body, 'videoMaxMiB') }))
}

/** a bound's box: empty for none (null), else the number typed (a non-number fails governance_put's check, shown on the page) */
function boundField(body: Record<string, unknown>, name: string): number | null {
  const v = field(body, name).trim()
  return v === '' ? null : Number(v)
}
