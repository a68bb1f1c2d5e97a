/**
 * The console's script, an ES module served as /_emulator/console/app.js. It polls the
 * snapshot every second and redraws a section only when its data changed (buttons stay put
 * between polls), and its buttons call the documented control routes. Every value from the
 * snapshot goes into the page as text (`textContent`, `append(string)`, attributes through
 * `setAttribute`); nothing is parsed as markup, and links are taken only when they are paths on
 * the emulator itself. Plain JavaScript in a string: the page needs no build step.
 */
export const CONSOLE_SCRIPT = String.raw`const POLL_MS = 1000
const SNAPSHOT = '/_emulator/console/snapshot'

const drawn = new Map()
let timer
let inFlight

function el(tag, attributes, ...children) {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue
    if (name === 'text') node.textContent = String(value)
    else node.setAttribute(name, String(value))
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child)
  }
  return node
}

/** Only paths on the emulator itself become links: never another origin, never a script URL. */
function link(url, text, title) {
  if (typeof url !== 'string' || !url.startsWith('/') || url.startsWith('//')) return el('span', { text, title })
  return el('a', { href: url, target: '_blank', rel: 'noopener noreferrer', text, title })
}

function short(value, keep) {
  if (value === null || value === undefined || value === '') return el('span', { class: 'muted', text: '-' })
  const text = String(value)
  const n = keep || 6
  const shown = text.length > 2 * n + 3 ? text.slice(0, n + (text.startsWith('0x') ? 2 : 0)) + '\u2026' + text.slice(-n) : text
  return el('code', { title: text, text: shown })
}

/** A UUID by its first 8 characters, the whole id in its title (and in the links and data-id). */
function shortId(id) {
  const text = String(id)
  return el('code', { title: text, text: text.length > 12 ? text.slice(0, 8) + '\u2026' : text })
}

function duration(ms) {
  if (ms < 1000) return ms + ' ms'
  if (ms < 60000) return +(ms / 1000).toFixed(1) + ' s'
  if (ms < 3600000) return +(ms / 60000).toFixed(1) + ' min'
  return +(ms / 3600000).toFixed(1) + ' h'
}

function time(iso) {
  if (!iso) return el('span', { class: 'muted', text: '-' })
  return el('span', { title: iso, class: 'mono', text: String(iso).slice(11, 19) })
}

function tone(status) {
  const text = String(status || '')
  if (text === 'DONE' || text === 'delivered' || text === 'TaskDecommitmentCompleted') return 'ok'
  if (text === 'FAILED' || text === 'failed' || text.endsWith('Failed')) return 'bad'
  if (text === 'OPEN' || text === 'RECEIVED' || text === 'Received' || text === 'pending') return 'wait'
  return 'run'
}

/** An HTTP status: 2xx fine, 4xx and 5xx not, 0 a connection dropped by a fault. */
function httpBadge(status) {
  const value = Number(status)
  const kind = value >= 200 && value < 400 ? 'ok' : 'bad'
  return el('span', { class: 'badge', 'data-tone': kind, text: String(status) })
}

function badge(status) {
  return el('span', { class: 'badge', 'data-tone': tone(status), text: status === null || status === undefined ? '-' : status })
}

function muted(text) {
  return el('span', { class: 'muted', text })
}

function table(columns, rows, rowAttributes) {
  const head = el('tr', {}, ...columns.map(([title]) => el('th', { text: title })))
  const body = rows.map((row) => {
    const cells = columns.map(([, cell, wrap]) => {
      const value = cell(row)
      return el('td', { class: wrap ? 'wrap' : null }, ...(Array.isArray(value) ? value : [value]))
    })
    return el('tr', rowAttributes ? rowAttributes(row) : {}, ...cells)
  })
  return el('table', {}, el('thead', {}, head), el('tbody', {}, ...body))
}

function section(id, rows, columns, rowAttributes) {
  for (const count of document.querySelectorAll('[data-count="' + id + '"]')) count.textContent = String(rows.length)
  const key = JSON.stringify(rows)
  if (drawn.get(id) === key) return
  drawn.set(id, key)
  const node = document.getElementById(id)
  node.toggleAttribute('data-filled', rows.length > 0)
  node.querySelector('.table').replaceChildren(rows.length ? table(columns, rows, rowAttributes) : '')
}

function queryActions(query) {
  if (query.status === 'DONE' || query.status === 'FAILED') {
    return el('span', { class: 'links' }, ...query.artifacts.map((artifact) => link(artifact.url, artifact.name.replace(/\..*$/, ''), artifact.name)))
  }
  return el(
    'span',
    { class: 'actions' },
    el('button', { type: 'button', class: 'small', 'data-complete': query.id, title: 'DONE now (POST /_emulator/queries/{id}/complete)', text: 'Complete' }),
    el('button', { type: 'button', class: 'small', 'data-fail': query.id, title: 'FAILED now, retriable (POST /_emulator/queries/{id}/fail)', text: 'Fail' }),
  )
}

const QUERY_COLUMNS = [
  ['Query', (q) => [link(q.recordUrl, q.id.slice(0, 8) + '\u2026', q.id), q.externalId ? el('span', { class: 'sub', text: q.externalId }) : null]],
  ['Status', (q) => [badge(q.status), el('span', { class: 'sub' }, 'created ', time(q.createdAt)), q.retryCount ? el('span', { class: 'sub', text: 'retries: ' + q.retryCount }) : null]],
  ['Step', (q) => [q.step ? el('span', { text: q.step }) : muted('-'), el('span', { class: 'sub', text: q.stepsDone + ' of ' + q.steps.length + ' steps' })]],
  ['Program hash', (q) => short(q.programHash)],
  ['Facts', (q) => [el('span', { class: 'sub' }, 'SHARP ', short(q.sharpFactHash)), el('span', { class: 'sub' }, 'Integrity ', short(q.integrityFactHash)), q.isFactMocked ? muted('mocked') : null]],
  ['Bucket', (q) => (q.bucketId ? [shortId(q.bucketId), el('span', { class: 'sub', text: 'job ' + q.bucketJobIndex })] : muted('-'))],
  ['Error', (q) => (q.errorReason ? el('span', { class: 'error', text: q.errorReason }) : muted('-')), true],
  ['Artifacts', queryActions],
]

const BUCKET_COLUMNS = [
  ['Bucket', (b) => [shortId(b.id), b.externalId ? el('span', { class: 'sub', text: b.externalId }) : null]],
  ['Status', (b) => badge(b.status)],
  ['Queries', (b) => String(b.leaves)],
  ['Mock proof', (b) => (b.mockProof ? 'yes' : 'no')],
  ['Owner', (b) => el('code', { text: b.owner })],
  ['Created', (b) => time(b.createdAt)],
  ['Closed', (b) => time(b.closedAt)],
]

function mmrList(mmrs) {
  if (!mmrs.length) return muted('not known yet')
  return mmrs.map((mmr) => el('span', { class: 'sub' }, mmr.hashing_function + ' #' + mmr.id + ' on ' + mmr.chain_id + ', size ' + mmr.size + ', root ', short(mmr.root)))
}

const TASK_COLUMNS = [
  ['Task', (t) => [shortId(t.uuid), el('span', { class: 'sub', text: t.kind })]],
  ['Status', (t) => badge(t.status)],
  ['MMRs', (t) => mmrList(t.mmrs), true],
  ['Program hash', (t) => short(t.programHash)],
  ['Proving query', (t) => (t.provingQueryId ? shortId(t.provingQueryId) : muted('-'))],
  ['Error', (t) => (t.errorMessage ? el('span', { class: 'error', text: t.errorMessage }) : muted('-')), true],
  ['Updated', (t) => time(t.updatedAt)],
]

const BATCH_COLUMNS = [
  ['Batch query', (b) => shortId(b.internalId)],
  ['Status', (b) => badge(b.queryStatus)],
  ['Destination', (b) => String(b.destinationChainId)],
  ['Chains', (b) => b.chains.join(', ')],
  ['Reason', (b) => (b.reason ? el('span', { class: 'error', text: b.reason }) : muted('-')), true],
  ['Owner', (b) => el('code', { text: b.owner })],
  ['Created', (b) => time(b.createdAt)],
]

const KEY_COLUMNS = [
  ['Key', (k) => el('code', { text: k.masked })],
  ['keyId', (k) => el('code', { text: k.keyId })],
  ['From', (k) => k.source],
  ['Name', (k) => (k.name ? [k.name, el('span', { class: 'sub', text: k.projectId })] : muted('-'))],
  ['Queries', (k) => String(k.queries)],
  ['Tasks', (k) => String(k.tasks)],
  ['Batch queries', (k) => String(k.batchQueries)],
]

const WEBHOOK_COLUMNS = [
  ['Task', (w) => shortId(w.taskId)],
  ['URL', (w) => el('code', { text: w.url }), true],
  ['Event', (w) => (w.event ? w.event : muted('-'))],
  ['Delivery', (w) => badge(w.state)],
  ['Attempts', (w) => String(w.attempts)],
  ['Last answer', (w) => (w.lastError ? el('span', { class: 'error', text: w.lastError }) : w.lastStatus === null ? muted('-') : httpBadge(w.lastStatus)), true],
  ['At', (w) => time(w.lastAt)],
]

const REQUEST_COLUMNS = [
  ['At', (r) => time(r.at)],
  ['Method', (r) => el('code', { text: r.method })],
  ['Path', (r) => el('code', { text: r.path }), true],
  ['Status', (r) => httpBadge(r.status)],
  ['Fault', (r) => (r.fault ? el('span', { class: 'error', text: r.fault }) : muted('-'))],
]

function render(snapshot) {
  document.getElementById('now').textContent = snapshot.now.replace('T', ' ').replace(/\.\d+Z$/, 'Z')
  document.getElementById('clock').textContent = snapshot.clock === 'simulated' ? 'simulated' : 'real time'
  document.getElementById('timing').textContent = duration(snapshot.timing.receivedMs) + ' received, ' + duration(snapshot.timing.stepMs) + ' a step'
  document.getElementById('persistent').textContent = snapshot.persistent ? 'on disk' : 'in memory'
  document.getElementById('clock-controls').hidden = snapshot.clock !== 'simulated'
  const plans = snapshot.nextQueries.map((plan) => (plan.outcome === 'fail' ? 'fail' + (plan.atStep ? ' at ' + plan.atStep : '') : 'done'))
  document.getElementById('plans').textContent = plans.length ? 'planned: ' + plans.join(', ') : 'no plan: the next query runs normally'
  section('queries', snapshot.queries, QUERY_COLUMNS, (q) => ({ 'data-id': q.id, 'data-status': q.status }))
  section('buckets', snapshot.buckets, BUCKET_COLUMNS, (b) => ({ 'data-id': b.id }))
  section('tasks', snapshot.tasks, TASK_COLUMNS, (t) => ({ 'data-id': t.uuid }))
  section('batches', snapshot.batchQueries, BATCH_COLUMNS, (b) => ({ 'data-id': b.internalId }))
  section('keys', snapshot.keys.keys, KEY_COLUMNS)
  section('webhooks', snapshot.webhooks, WEBHOOK_COLUMNS)
  section('requests', snapshot.requests, REQUEST_COLUMNS)
  const note = snapshot.keys.anyKeyAccepted ? 'API keys (any non-empty key is accepted)' : 'API keys (allow-list)'
  const keysTitle = document.querySelector('#keys h2')
  if (keysTitle.firstChild.textContent !== note + ' ') keysTitle.firstChild.textContent = note + ' '
  // The lists are cut at their newest rows: the counts are of everything.
  for (const [id, total] of Object.entries(snapshot.totals)) {
    for (const count of document.querySelectorAll('[data-count="' + id + '"]')) count.textContent = String(total)
  }
}

function setLive(ok, detail) {
  const live = document.getElementById('live')
  live.dataset.state = ok ? 'live' : 'down'
  live.textContent = ok ? 'live' : 'emulator unreachable'
  live.title = ok ? 'refreshed every second' : String(detail || '')
}

async function refresh() {
  try {
    const response = await fetch(SNAPSHOT, { cache: 'no-store' })
    if (!response.ok) throw new Error('snapshot: HTTP ' + response.status)
    render(await response.json())
    setLive(true)
  } catch (error) {
    setLive(false, error && error.message)
  }
}

/** One poll at a time; a control call asks for the next one at once. */
function poll() {
  clearTimeout(timer)
  inFlight ??= refresh().finally(() => {
    inFlight = undefined
    timer = setTimeout(poll, POLL_MS)
  })
  return inFlight
}

function say(text, kind) {
  const message = document.getElementById('message')
  message.textContent = text
  message.dataset.kind = kind || 'info'
}

async function control(method, path, body) {
  // Marked as the console's own (see CONTROL_HEADER in router.ts): the control API refuses a
  // state change that is neither JSON nor marked, as a page of another origin would send it.
  const init = { method, headers: { 'x-emulator-control': 'console' } }
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json'
    init.body = JSON.stringify(body)
  }
  const response = await fetch(path, init)
  const data = await response.json().catch(() => ({}))
  if (!response.ok) throw new Error(method + ' ' + path + ': ' + (data.message || data.error || 'HTTP ' + response.status))
  return data
}

async function act(button, run, done) {
  button.disabled = true
  try {
    const answer = await run()
    say(done(answer), 'info')
  } catch (error) {
    say(error.message, 'error')
  } finally {
    button.disabled = false
    await poll()
  }
}

document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button') : null
  if (!button) return
  if (button.id === 'fail-next') {
    act(button, () => control('POST', '/_emulator/next-query', { outcome: 'fail' }), (a) => 'The next submitted query will fail (' + a.pending + ' plan(s) pending).')
  } else if (button.id === 'complete-next') {
    act(button, () => control('POST', '/_emulator/next-query', { outcome: 'done' }), (a) => 'The next submitted query will be DONE at once (' + a.pending + ' plan(s) pending).')
  } else if (button.id === 'reset') {
    if (!window.confirm('Forget every query, bucket, task, batch query, plan, fault and the request log?')) return
    act(button, () => control('POST', '/_emulator/reset'), () => 'Reset: the emulator is empty.')
  } else if (button.dataset.advance) {
    const ms = Number(button.dataset.advance)
    act(button, () => control('POST', '/_emulator/clock/advance', { ms }), (a) => 'Clock advanced to ' + a.now + '.')
  } else if (button.dataset.complete) {
    const id = button.dataset.complete
    act(button, () => control('POST', '/_emulator/queries/' + encodeURIComponent(id) + '/complete'), () => 'Query ' + id + ' is DONE.')
  } else if (button.dataset.fail) {
    const id = button.dataset.fail
    const body = { retriable: true, reason: 'Failed from the console' }
    act(button, () => control('POST', '/_emulator/queries/' + encodeURIComponent(id) + '/fail', body), () => 'Query ' + id + ' has FAILED (retriable).')
  }
})

poll()
`
