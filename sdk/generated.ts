// Generated from contracts/operations/index.ts by scripts/gen-sdk.ts — do not edit.
import type { Call, InputOf as In } from './types.ts'

/** The REST route of every operation. */
export const routes = {
  me: { method: 'GET', path: '/v1/me' },
  key_create: { method: 'POST', path: '/v1/keys' },
  audit_list: { method: 'GET', path: '/v1/audit' },
  identity_list_assumable: { method: 'GET', path: '/v1/identities/assumable' },
  identity_create: { method: 'POST', path: '/v1/identities' },
  identity_list: { method: 'GET', path: '/v1/identities' },
  identity_delete: { method: 'DELETE', path: '/v1/identities/:identityId' },
  identity_proxy_put: { method: 'PUT', path: '/v1/identities/:identityId/proxy' },
  identity_proxy_delete: { method: 'DELETE', path: '/v1/identities/:identityId/proxy' },
  credential_create: { method: 'POST', path: '/v1/identities/:identityId/credentials' },
  credential_list: { method: 'GET', path: '/v1/identities/:identityId/credentials' },
  credential_rotate: { method: 'POST', path: '/v1/identities/:identityId/credentials/:credentialId/rotate' },
  credential_delete: { method: 'DELETE', path: '/v1/identities/:identityId/credentials/:credentialId' },
  grant_create: { method: 'POST', path: '/v1/identities/:identityId/grants' },
  grant_list: { method: 'GET', path: '/v1/identities/:identityId/grants' },
  grant_revoke: { method: 'POST', path: '/v1/identities/:identityId/grants/:grantId/revoke' },
  grant_delete: { method: 'DELETE', path: '/v1/identities/:identityId/grants/:grantId' },
  governance_get: { method: 'GET', path: '/v1/governance' },
  governance_put: { method: 'PUT', path: '/v1/governance' },
  credential_request: { method: 'POST', path: '/v1/credential-requests' },
  authstate_capture: { method: 'POST', path: '/v1/sessions/:sessionId/authstate' },
  authstate_list: { method: 'GET', path: '/v1/identities/:identityId/authstates' },
  session_start: { method: 'POST', path: '/v1/sessions' },
  spawn_and_start_session: { method: 'POST', path: '/v1/sessions/spawn' },
  session_get: { method: 'GET', path: '/v1/sessions/:sessionId' },
  session_list: { method: 'GET', path: '/v1/sessions' },
  session_end: { method: 'DELETE', path: '/v1/sessions/:sessionId' },
  session_journal: { method: 'GET', path: '/v1/sessions/:sessionId/journal' },
  session_cdp: { method: 'GET', path: '/v1/sessions/:sessionId/cdp' },
  request_human: { method: 'POST', path: '/v1/sessions/:sessionId/request-human' },
  navigate: { method: 'POST', path: '/v1/sessions/:sessionId/navigate' },
  perceive: { method: 'POST', path: '/v1/sessions/:sessionId/perceive' },
  act: { method: 'POST', path: '/v1/sessions/:sessionId/act' },
  credential_fill: { method: 'POST', path: '/v1/sessions/:sessionId/fill-credential' },
  screenshot: { method: 'POST', path: '/v1/sessions/:sessionId/screenshot' },
  go_back: { method: 'POST', path: '/v1/sessions/:sessionId/go-back' },
  reload: { method: 'POST', path: '/v1/sessions/:sessionId/reload' },
  wait_for: { method: 'POST', path: '/v1/sessions/:sessionId/wait-for' },
  select_option: { method: 'POST', path: '/v1/sessions/:sessionId/select-option' },
  hover: { method: 'POST', path: '/v1/sessions/:sessionId/hover' },
  pdf: { method: 'POST', path: '/v1/sessions/:sessionId/pdf' },
  console_messages: { method: 'GET', path: '/v1/sessions/:sessionId/console' },
  go_forward: { method: 'POST', path: '/v1/sessions/:sessionId/go-forward' },
  tab_list: { method: 'GET', path: '/v1/sessions/:sessionId/tabs' },
  tab_open: { method: 'POST', path: '/v1/sessions/:sessionId/tabs/open' },
  tab_select: { method: 'POST', path: '/v1/sessions/:sessionId/tabs/select' },
  tab_close: { method: 'POST', path: '/v1/sessions/:sessionId/tabs/close' },
  dialog_handle: { method: 'POST', path: '/v1/sessions/:sessionId/dialog' },
  resize: { method: 'POST', path: '/v1/sessions/:sessionId/resize' },
  drag: { method: 'POST', path: '/v1/sessions/:sessionId/drag' },
  mouse_click: { method: 'POST', path: '/v1/sessions/:sessionId/mouse-click' },
  mouse_move: { method: 'POST', path: '/v1/sessions/:sessionId/mouse-move' },
  mouse_wheel: { method: 'POST', path: '/v1/sessions/:sessionId/mouse-wheel' },
  fill_form: { method: 'POST', path: '/v1/sessions/:sessionId/fill-form' },
  file_put: { method: 'POST', path: '/v1/sessions/:sessionId/files' },
  file_upload: { method: 'POST', path: '/v1/sessions/:sessionId/file-upload' },
  file_list: { method: 'GET', path: '/v1/sessions/:sessionId/files' },
  file_read: { method: 'GET', path: '/v1/sessions/:sessionId/files/:fileId' },
  network_requests: { method: 'GET', path: '/v1/sessions/:sessionId/network' },
  evaluate: { method: 'POST', path: '/v1/sessions/:sessionId/evaluate' },
  network_list: { method: 'GET', path: '/v1/networks' },
  network_create: { method: 'POST', path: '/v1/networks' },
  network_update: { method: 'PATCH', path: '/v1/networks/:networkId' },
  network_rotate_token: { method: 'POST', path: '/v1/networks/:networkId/rotate-token' },
  network_delete: { method: 'DELETE', path: '/v1/networks/:networkId' },
  network_daemons: { method: 'GET', path: '/v1/networks/:networkId/daemons' },
  local_reach_ensure: { method: 'POST', path: '/v1/local-reach/ensure' },
  network_reach_grant_create: { method: 'POST', path: '/v1/local-reach/grants' },
  network_reach_grant_list: { method: 'GET', path: '/v1/local-reach/grants' },
  network_reach_grant_revoke: { method: 'POST', path: '/v1/local-reach/grants/:grantId/revoke' },
  session_recording_get: { method: 'GET', path: '/v1/sessions/:sessionId/recording' },
  session_recording_events: { method: 'GET', path: '/v1/sessions/:sessionId/recording/events' },
  webhook_create: { method: 'POST', path: '/v1/webhooks' },
  webhook_list: { method: 'GET', path: '/v1/webhooks' },
  webhook_delete: { method: 'DELETE', path: '/v1/webhooks/:webhookId' },
  webhook_rotate_secret: { method: 'POST', path: '/v1/webhooks/:webhookId/rotate-secret' },
  webhook_deliveries: { method: 'GET', path: '/v1/webhooks/:webhookId/deliveries' },
  webhook_enable: { method: 'POST', path: '/v1/webhooks/:webhookId/enable' },
} as const

/** One method per operation, grouped by domain. */
export function methods(call: Call) {
  return {
    me: {
      /** Who the calling credential is: its org, agent and scopes */
      get: () => call('me', {}),
    },
    keys: {
      /** Mint an API key; a key never gets a scope its minter lacks */
      create: (input: In<'key_create'>) => call('key_create', input),
    },
    audit: {
      /** The org audit trail, oldest first, paged by id */
      list: (input: In<'audit_list'> = {}) => call('audit_list', input),
    },
    identities: {
      /** List identities the calling agent holds a live assume or manage grant on, with credential slots (no values) and lease state */
      assumable: () => call('identity_list_assumable', {}),
      /** Create an identity (persona) in the org; names are unique per org */
      create: (input: In<'identity_create'>) => call('identity_create', input),
      /** List the org identities with their lease state (never the holder) */
      list: () => call('identity_list', {}),
      /** Delete an identity with its credentials and grants; refused (409) while a session holds its lease */
      delete: (identityId: In<'identity_delete'>['identityId']) => call('identity_delete', { identityId }),
      /** Set an identity's default upstream proxy, used by a session bound to it that names no proxy of its own; its host must be on the org allowlist (governance proxyHosts) and its credentials are sealed, never returned */
      proxyPut: (identityId: In<'identity_proxy_put'>['identityId'], input: Omit<In<'identity_proxy_put'>, 'identityId'>) => call('identity_proxy_put', { ...input, identityId }),
      /** Remove an identity's default upstream proxy and its sealed credentials (sessions already open keep theirs) */
      proxyDelete: (identityId: In<'identity_proxy_delete'>['identityId']) => call('identity_proxy_delete', { identityId }),
    },
    credentials: {
      /** Add a sealed credential to an identity; the value is write-only and only a mask is returned */
      create: (identityId: In<'credential_create'>['identityId'], input: Omit<In<'credential_create'>, 'identityId'>) => call('credential_create', { ...input, identityId }),
      /** List an identity's credentials: names, placeholders, origins and masks only */
      list: (identityId: In<'credential_list'>['identityId']) => call('credential_list', { identityId }),
      /** Replace a credential value (re-sealed); its name, kind and origin allowlist are unchanged */
      rotate: (identityId: In<'credential_rotate'>['identityId'], credentialId: In<'credential_rotate'>['credentialId'], input: Omit<In<'credential_rotate'>, 'identityId' | 'credentialId'>) => call('credential_rotate', { ...input, identityId, credentialId }),
      /** Delete a credential from an identity */
      delete: (identityId: In<'credential_delete'>['identityId'], credentialId: In<'credential_delete'>['credentialId']) => call('credential_delete', { identityId, credentialId }),
      /** Ask a person to enter a credential this identity lacks (a password, or an otpauth:// URI for one-time codes), for credential_fill to use. The secret is entered on a console page and never reaches you. A client with URL elicitation is sent the page and the call returns when the credential is saved (or refused, or expired); otherwise the result carries the URL to hand to a person, and credential_list shows the credential once it exists */
      request: (input: In<'credential_request'>) => call('credential_request', input),
    },
    grants: {
      /** Grant an agent the right to assume or manage an identity until expiresAt */
      create: (identityId: In<'grant_create'>['identityId'], input: Omit<In<'grant_create'>, 'identityId'>) => call('grant_create', { ...input, identityId }),
      /** List who may assume or manage an identity, with each grant state (live, expired, revoked) */
      list: (identityId: In<'grant_list'>['identityId']) => call('grant_list', { identityId }),
      /** Soft-revoke a grant (idempotent): future binds fail; a lease already held is kept until its session ends */
      revoke: (identityId: In<'grant_revoke'>['identityId'], grantId: In<'grant_revoke'>['grantId']) => call('grant_revoke', { identityId, grantId }),
      /** Hard-delete a grant: removes the row and its audit trail */
      delete: (identityId: In<'grant_delete'>['identityId'], grantId: In<'grant_delete'>['grantId']) => call('grant_delete', { identityId, grantId }),
    },
    governance: {
      /** Read the org governance flags */
      get: () => call('governance_get', {}),
      /** Update the org governance flags; fields left out keep their value */
      put: (input: In<'governance_put'> = {}) => call('governance_put', input),
    },
    authstates: {
      /** Capture a live session's cookies and storage as a new sealed auth-state version of its bound identity (admin action; never automatic) */
      capture: (sessionId: In<'authstate_capture'>['sessionId']) => call('authstate_capture', { sessionId }),
      /** List an identity's captured auth-state versions, newest first: id, createdAt, createdBy and the hosts covered */
      list: (identityId: In<'authstate_list'>['identityId']) => call('authstate_list', { identityId }),
    },
    sessions: {
      /** Open a browser session, optionally binding a persona; url is recorded but not navigated. Answers live, or pending when the browser is not live within waitSeconds (default 30 s): the start goes on, and session_get with waitSeconds waits for it */
      create: (input: In<'session_start'> = {}) => call('session_start', input),
      /** Open a session as a named child of the calling agent (a distinct child principal with a provenance edge) */
      spawn: (input: In<'spawn_and_start_session'>) => call('spawn_and_start_session', input),
      /** One session of the caller’s org; with waitSeconds, waits up to that long for a pending session to go live (or fail) */
      get: (sessionId: In<'session_get'>['sessionId'], input: Omit<In<'session_get'>, 'sessionId'> = {}) => call('session_get', { ...input, sessionId }),
      /** Sessions of the caller’s org, newest first */
      list: (input: In<'session_list'> = {}) => call('session_list', input),
      /** End a session and release its persona lease; idempotent */
      end: (sessionId: In<'session_end'>['sessionId']) => call('session_end', { sessionId }),
      /** The value-free journal of a session’s operations */
      journal: (sessionId: In<'session_journal'>['sessionId'], input: Omit<In<'session_journal'>, 'sessionId'> = {}) => call('session_journal', { ...input, sessionId }),
      /** Where to connect a CDP client (Playwright connectOverCDP, Puppeteer) to a live session, with this same Bearer credential; not on a session with a bound identity */
      cdp: (sessionId: In<'session_cdp'>['sessionId']) => call('session_cdp', { sessionId }),
      /** Ask a person for help (a CAPTCHA, a second factor, a judgement call): returns the console URL where someone of the org watches the session live and can take control. While they hold it, driving tools answer 409 human_in_control; session_get shows control: agent again once they hand back. A client with URL elicitation is sent the live view and the call returns once control is handed back */
      requestHuman: (sessionId: In<'request_human'>['sessionId'], input: Omit<In<'request_human'>, 'sessionId'>) => call('request_human', { ...input, sessionId }),
      /** Navigate the session’s page; returns the resolved url after redirects, and in `changes` the new page: the whole of it with its refs when it is small (a form, a menu), else what it is in a few hundred characters (counts of its links, buttons, fields and headings; its landmarks and top headings with refs). perceive then reads the page without loading it again; perceive with query finds elements by their words */
      navigate: (sessionId: In<'navigate'>['sessionId'], url: In<'navigate'>['url'], input: Omit<In<'navigate'>, 'sessionId' | 'url'> = {}) => call('navigate', { ...input, sessionId, url }),
      /** Read the page: url, title, accessibility snapshot, and as text only the visible lines carrying words the snapshot does not already say (usually none: the snapshot holds the page’s words; password values never appear). Every element carries [ref=e12] (inside an iframe [ref=f1e3]): pass the ref to act, hover, select_option, drag, fill_form, file_upload, wait_for or credential_fill instead of a selector; a ref holds until its document navigates. Text the page wrote (names, values, text runs) is always in double quotes with YAML escapes (\" \\ \n \xNN), one element a line, and a [ref= inside it is written \x5bref=: only a [ref=…] outside quotes is a ref. At most maxChars characters (default 12000): the outline of landmarks and headings and what the viewport shows come first; when truncated is true, call again with the cursor given to read on until the whole page has been read, every element once. ref returns the subtree under one element; query returns only the elements whose name or text holds the words, each inside the link, button or other control that holds it (the ref to act on), text with its whole sentence or small paragraph, with the headings and landmarks above them; the heading, term or signature that defines the words comes first with the paragraphs under it (a question such as "what is X" asks for X) — or, when more than ten elements match, the matches alone, each once: the definition, then those holding the words as one phrase, controls first within */
      perceive: (sessionId: In<'perceive'>['sessionId'], input: Omit<In<'perceive'>, 'sessionId'>) => call('perceive', { ...input, sessionId }),
      /** One page action: click, type, press, goto or scroll. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one (type and press without either go to the focused element). The answer's changes say what the action changed, with refs */
      act: (sessionId: In<'act'>['sessionId'], input: Omit<In<'act'>, 'sessionId'>) => call('act', { ...input, sessionId }),
      /** Securely type a persona credential into a field; the secret is never returned or shown. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one; a field inside an iframe is judged by the iframe’s own origin */
      fillCredential: (sessionId: In<'credential_fill'>['sessionId'], credentialName: In<'credential_fill'>['credentialName'], selector: In<'credential_fill'>['selector'], input: Omit<In<'credential_fill'>, 'sessionId' | 'credentialName' | 'selector'>) => call('credential_fill', { ...input, sessionId, credentialName, selector }),
      /** PNG of the page’s viewport; with ref (from perceive, frames included) or selector, of that one element only (scrolled into view). Filled fields render masked */
      screenshot: (sessionId: In<'screenshot'>['sessionId'], input: Omit<In<'screenshot'>, 'sessionId'>) => call('screenshot', { ...input, sessionId }),
      /** Go back in the page history */
      goBack: (sessionId: In<'go_back'>['sessionId'], input: Omit<In<'go_back'>, 'sessionId'> = {}) => call('go_back', { ...input, sessionId }),
      /** Reload the page */
      reload: (sessionId: In<'reload'>['sessionId'], input: Omit<In<'reload'>, 'sessionId'> = {}) => call('reload', { ...input, sessionId }),
      /** Wait until an element (by ref or selector) or a text appears (exactly one of the three) */
      waitFor: (sessionId: In<'wait_for'>['sessionId'], input: Omit<In<'wait_for'>, 'sessionId'>) => call('wait_for', { ...input, sessionId }),
      /** Select options of a <select>. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one */
      selectOption: (sessionId: In<'select_option'>['sessionId'], input: Omit<In<'select_option'>, 'sessionId'>) => call('select_option', { ...input, sessionId }),
      /** Hover over an element. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one */
      hover: (sessionId: In<'hover'>['sessionId'], input: Omit<In<'hover'>, 'sessionId'>) => call('hover', { ...input, sessionId }),
      /** PDF of the page. Refused (403 pdf_after_fill) once a credential was filled in this session: a PDF carries page text, where a filled secret could be echoed; use screenshot instead */
      pdf: (sessionId: In<'pdf'>['sessionId']) => call('pdf', { sessionId }),
      /** Console messages the page logged */
      consoleMessages: (sessionId: In<'console_messages'>['sessionId']) => call('console_messages', { sessionId }),
      /** Go forward in the active tab’s history */
      goForward: (sessionId: In<'go_forward'>['sessionId'], input: Omit<In<'go_forward'>, 'sessionId'> = {}) => call('go_forward', { ...input, sessionId }),
      /** List the session’s tabs (id, url, title, which is active). New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabList: (sessionId: In<'tab_list'>['sessionId']) => call('tab_list', { sessionId }),
      /** Open a new tab, optionally at a url, and make it the active tab. New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabOpen: (sessionId: In<'tab_open'>['sessionId'], input: Omit<In<'tab_open'>, 'sessionId'> = {}) => call('tab_open', { ...input, sessionId }),
      /** Make a tab the active tab (the one every other tool drives) and bring it to the front. New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabSelect: (sessionId: In<'tab_select'>['sessionId'], input: Omit<In<'tab_select'>, 'sessionId'>) => call('tab_select', { ...input, sessionId }),
      /** Close a tab (default: the active one). The page’s beforeunload handler runs: its dialog is answered like any other (see dialog_handle; by default the page may leave), and a “stay” answer keeps the tab open (closed: false). New tabs and popups the page opens (window.open, target=_blank) are tracked and become the active tab, as in a browser. The active tab is the one every other tool drives. When it closes (tab_close, or the page closes itself), the tab active before it takes over; closing the last tab opens a blank one, so the session stays usable. */
      tabClose: (sessionId: In<'tab_close'>['sessionId'], input: Omit<In<'tab_close'>, 'sessionId'> = {}) => call('tab_close', { ...input, sessionId }),
      /** Set the answer to the next JavaScript dialog (alert, confirm, prompt, beforeunload) in any tab: accept (with promptText for a prompt) or dismiss. Dialogs never block the page or a tool call: each one is answered the moment it opens, with the armed answer if this tool set one (used once), otherwise by default: alert closed, confirm and prompt dismissed (false / null), beforeunload accepted (the page may leave). So call this BEFORE the action that opens the dialog. Every dialog is reported with how it was answered: in this tool’s result (the latest dialogs) and as a console message of type "dialog" (console_messages). */
      dialogHandle: (sessionId: In<'dialog_handle'>['sessionId'], input: Omit<In<'dialog_handle'>, 'sessionId'>) => call('dialog_handle', { ...input, sessionId }),
      /** Set the viewport size of every tab, open now or later */
      resize: (sessionId: In<'resize'>['sessionId'], input: Omit<In<'resize'>, 'sessionId'>) => call('resize', { ...input, sessionId }),
      /** Drag one element onto another (press on the first, move, release on the second; HTML5 drag and drop included). Name each by ref (fromRef, toRef: from perceive’s snapshot) or by selector (from, to) */
      drag: (sessionId: In<'drag'>['sessionId'], input: Omit<In<'drag'>, 'sessionId'>) => call('drag', { ...input, sessionId }),
      /** Click at viewport coordinates (for agents that read a screenshot): optional button and click count */
      mouseClick: (sessionId: In<'mouse_click'>['sessionId'], input: Omit<In<'mouse_click'>, 'sessionId'>) => call('mouse_click', { ...input, sessionId }),
      /** Move the mouse to viewport coordinates (hover effects, pointer tracking) */
      mouseMove: (sessionId: In<'mouse_move'>['sessionId'], input: Omit<In<'mouse_move'>, 'sessionId'>) => call('mouse_move', { ...input, sessionId }),
      /** Turn the mouse wheel at a point (x and y; without them, where the mouse is): deltaX and deltaY in pixels scroll whatever is under it */
      mouseWheel: (sessionId: In<'mouse_wheel'>['sessionId'], input: Omit<In<'mouse_wheel'>, 'sessionId'>) => call('mouse_wheel', { ...input, sessionId }),
      /** Fill several form fields at once (at most 50): text inputs, textareas, checkboxes, radios and selects; every field is checked before any is filled. Each field is named by ref (from perceive’s snapshot) or by selector, exactly one */
      fillForm: (sessionId: In<'fill_form'>['sessionId'], input: Omit<In<'fill_form'>, 'sessionId'>) => call('fill_form', { ...input, sessionId }),
      /** Put a file into the session (content in base64) for file_upload to set into a page’s file input; at most 20 files per session, 10 MiB each. REST only (the body may be up to 15 MiB) */
      filePut: (sessionId: In<'file_put'>['sessionId'], input: Omit<In<'file_put'>, 'sessionId'>) => call('file_put', { ...input, sessionId }),
      /** Set files of the session (put with file_put, or downloaded) into an <input type=file>, by id or name; several need an input with the multiple attribute. The page sees each file’s name, size and type; at most 20 files per session, 10 MiB each. Name the element by ref (from perceive’s snapshot, e.g. "e12"; frames included) or by selector, exactly one */
      fileUpload: (sessionId: In<'file_upload'>['sessionId'], input: Omit<In<'file_upload'>, 'sessionId'>) => call('file_upload', { ...input, sessionId }),
      /** The session’s files: those put into it and those its pages downloaded (a download over the limits is listed as refused, with its reason); at most 20 files per session, 10 MiB each */
      fileList: (sessionId: In<'file_list'>['sessionId']) => call('file_list', { sessionId }),
      /** Read a session file’s bytes (a download exactly as the page received it): at most 5 MiB per call, from offset; eof says whether more follows */
      fileRead: (sessionId: In<'file_read'>['sessionId'], fileId: In<'file_read'>['fileId'], input: Omit<In<'file_read'>, 'sessionId' | 'fileId'> = {}) => call('file_read', { ...input, sessionId, fileId }),
      /** Run JavaScript in the page and return its JSON result: an expression, or a function body that returns a value (await allowed). Refused on a session with a bound identity */
      evaluate: (sessionId: In<'evaluate'>['sessionId'], input: Omit<In<'evaluate'>, 'sessionId'>) => call('evaluate', { ...input, sessionId }),
      /** A recorded session’s recording: when, how large, where to download and replay it */
      recordingGet: (sessionId: In<'session_recording_get'>['sessionId']) => call('session_recording_get', { sessionId }),
      /** Download a recorded session’s timeline (rrweb events, JSON); a live session’s is read up to now */
      recordingEvents: (sessionId: In<'session_recording_events'>['sessionId']) => call('session_recording_events', { sessionId }),
    },
    networks: {
      /** The requests the session’s pages made (the newest 500 are kept): method, URL without its query, status, resource type and timing — never a header or a body */
      requests: (sessionId: In<'network_requests'>['sessionId'], input: Omit<In<'network_requests'>, 'sessionId'> = {}) => call('network_requests', { ...input, sessionId }),
      /** Networks of the org (empty array if none) */
      list: () => call('network_list', {}),
      /** Create a network; its join token secret is returned once */
      create: (input: In<'network_create'>) => call('network_create', input),
      /** Replace the declared hosts (host, IPv4, [IPv6] or ::1, optionally :port); live sessions keep their launch-time list */
      update: (networkId: In<'network_update'>['networkId'], input: Omit<In<'network_update'>, 'networkId'>) => call('network_update', { ...input, networkId }),
      /** Issue a fresh join token; the old one stops working and joined daemons must rejoin */
      rotateToken: (networkId: In<'network_rotate_token'>['networkId']) => call('network_rotate_token', { networkId }),
      /** Delete a network; its tokens stop working and its daemons are dropped */
      delete: (networkId: In<'network_delete'>['networkId']) => call('network_delete', { networkId }),
      /** Daemons of a network (reachable true while connected; empty when none is attached) */
      daemons: (networkId: In<'network_daemons'>['networkId']) => call('network_daemons', { networkId }),
      /** Make a local target reachable: creates or reuses the backing network and declares the target. Needs networks:write, or a reach grant for the calling agent (an OAuth login never holds networks:write): a grant to a network lets the agent declare targets on that network; a seed grant lets it create its own network once (named by network, default "local") */
      ensureLocalReach: (input: In<'local_reach_ensure'>) => call('local_reach_ensure', input),
      /** Grant an agent local reach without networks:write: to an existing network (networkId), or, without networkId, the right to create one network of its own with local_reach_ensure */
      reachGrantCreate: (input: In<'network_reach_grant_create'>) => call('network_reach_grant_create', input),
      /** Reach grants of the org, oldest first, each with its state (live, revoked, ended) */
      reachGrantList: (input: In<'network_reach_grant_list'> = {}) => call('network_reach_grant_list', input),
      /** Revoke a reach grant (idempotent): local_reach_ensure stops working with it; networks, declared hosts and daemons stay as they are */
      reachGrantRevoke: (grantId: In<'network_reach_grant_revoke'>['grantId']) => call('network_reach_grant_revoke', { grantId }),
    },
    webhooks: {
      /** Register a webhook endpoint for some events; its signing secret is returned once */
      create: (input: In<'webhook_create'>) => call('webhook_create', input),
      /** The org’s webhook endpoints, oldest first (never their secrets) */
      list: () => call('webhook_list', {}),
      /** Delete a webhook endpoint: nothing more is sent to it, and its delivery log goes with it */
      delete: (webhookId: In<'webhook_delete'>['webhookId']) => call('webhook_delete', { webhookId }),
      /** Issue a new signing secret (returned once); deliveries from now on, retries included, are signed with it only */
      rotateSecret: (webhookId: In<'webhook_rotate_secret'>['webhookId']) => call('webhook_rotate_secret', { webhookId }),
      /** The delivery log of one endpoint, newest first: each event sent, its state and every attempt’s response status */
      deliveries: (webhookId: In<'webhook_deliveries'>['webhookId'], input: Omit<In<'webhook_deliveries'>, 'webhookId'> = {}) => call('webhook_deliveries', { ...input, webhookId }),
      /** Enable an endpoint disabled after failing: its pending deliveries are attempted again, and new events are queued for it */
      enable: (webhookId: In<'webhook_enable'>['webhookId']) => call('webhook_enable', { webhookId }),
    },
  }
}
