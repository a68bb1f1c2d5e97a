/**
 * The console's page and styles (served by console/routes.ts). The markup is static: the script
 * (console/script.ts) fills the tables from the snapshot, inserting every value as text.
 */

const SECTIONS: [id: string, title: string, empty: string][] = [
  ['queries', 'Proving queries', 'No proving query yet. Submit one: proving prove examples/fib/pie.zip --wait'],
  ['buckets', 'Buckets', 'No bucket yet: proving bucket create'],
  ['tasks', 'Data-processor tasks', 'No task yet: proving task submit'],
  ['batches', 'Storage-proof batch queries', 'No batch query yet: proving storage submit'],
  ['keys', 'API keys', 'No key seen yet.'],
  ['webhooks', 'Webhook deliveries', 'No webhook yet: tasks with a webhook_url send one when they end.'],
  ['requests', 'Request log', 'No request yet (the console and the control API are not logged).'],
]

export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>proving-kit emulator</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/_emulator/console/app.css">
<script type="module" src="/_emulator/console/app.js"></script>
</head>
<body>
<header class="top">
  <h1>proving-kit <span>emulator</span></h1>
  <span id="live" class="live" data-state="connecting">connecting</span>
  <dl class="facts">
    <dt>clock</dt><dd id="clock">-</dd>
    <dt>now</dt><dd id="now">-</dd>
    <dt>timing</dt><dd id="timing">-</dd>
    <dt>state</dt><dd id="persistent">-</dd>
  </dl>
</header>
<nav class="sections">
${SECTIONS.map(([id, title]) => `  <a href="#${id}">${title} <span class="count" data-count="${id}">0</span></a>`).join('\n')}
</nav>
<section class="controls" aria-label="Controls">
  <div class="group">
    <span class="label">Next query</span>
    <button type="button" id="fail-next">Fail next query</button>
    <button type="button" id="complete-next">Complete next query</button>
    <span id="plans" class="muted"></span>
  </div>
  <div class="group" id="clock-controls" hidden>
    <span class="label">Simulated clock</span>
    <button type="button" data-advance="1000">+1 s</button>
    <button type="button" data-advance="60000">+1 min</button>
    <button type="button" data-advance="3600000">+1 h</button>
  </div>
  <div class="group end">
    <button type="button" id="reset" class="danger">Reset everything</button>
  </div>
  <p id="message" role="status" class="message"></p>
</section>
<main>
${SECTIONS.map(
  ([id, title, empty]) => `<section id="${id}" class="list">
  <h2>${title} <span class="count" data-count="${id}">0</span></h2>
  <div class="table"></div>
  <p class="empty">${empty}</p>
</section>`,
).join('\n')}
</main>
<footer>Served by the emulator for this machine only. Control API: docs/emulator.md. Keys are shown by their keyId (a digest); no key is ever shown.</footer>
</body>
</html>
`

export const CONSOLE_STYLES = `:root {
  --ink: #1d2433; --muted: #6b7385; --line: #e3e6ee; --paper: #f6f7fb; --card: #fff;
  --accent: #3d5afe; --ok: #18794e; --ok-bg: #e3f6ec; --bad: #b42318; --bad-bg: #fde8e7;
  --run: #1d4ed8; --run-bg: #e6edff; --wait: #5b6170; --wait-bg: #eef0f4;
  font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
  color: var(--ink); background: var(--paper);
}
* { box-sizing: border-box; }
/* The hidden attribute wins over the display of a class (.group is flex). */
[hidden] { display: none !important; }
body { margin: 0; }
code { white-space: nowrap; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12px; }
.top { display: flex; align-items: center; gap: 16px; padding: 10px 20px; background: #141a2a; color: #e8ebf5; flex-wrap: wrap; }
.top h1 { margin: 0; font-size: 16px; font-weight: 650; letter-spacing: .2px; }
.top h1 span { font-weight: 400; color: #9aa3bd; }
.facts { display: flex; gap: 6px 14px; margin: 0 0 0 auto; flex-wrap: wrap; }
.facts dt { color: #8790aa; }
.facts dd { margin: 0 0 0 -8px; font-variant-numeric: tabular-nums; }
.live { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #2a3350; color: #c9d0e6; }
.live::before { content: ""; display: inline-block; width: 7px; height: 7px; border-radius: 50%; margin-right: 6px; background: #8790aa; vertical-align: 1px; }
.live[data-state="live"]::before { background: #34d399; }
.live[data-state="down"] { background: #5c1d1d; color: #ffd7d5; }
.live[data-state="down"]::before { background: #f87171; }
.sections { display: flex; gap: 4px; padding: 6px 14px; background: var(--card); border-bottom: 1px solid var(--line); flex-wrap: wrap; }
.sections a { color: var(--ink); text-decoration: none; padding: 4px 8px; border-radius: 6px; }
.sections a:hover { background: var(--paper); }
.count { display: inline-block; min-width: 18px; padding: 0 6px; border-radius: 9px; background: var(--wait-bg); color: var(--wait); font-size: 11px; text-align: center; font-weight: 600; }
.controls { display: flex; align-items: center; gap: 8px 22px; padding: 10px 20px; flex-wrap: wrap; }
.group { display: flex; align-items: center; gap: 6px; }
.group.end { margin-left: auto; }
.label { color: var(--muted); margin-right: 2px; }
button { font: inherit; padding: 4px 10px; border: 1px solid #c9cfdd; border-radius: 6px; background: var(--card); color: var(--ink); cursor: pointer; }
button:hover { border-color: var(--accent); color: var(--accent); }
button:disabled { opacity: .5; cursor: default; }
button.danger:hover { border-color: var(--bad); color: var(--bad); }
button.small { padding: 1px 7px; font-size: 12px; }
.message { flex-basis: 100%; margin: 0; color: var(--muted); }
.message:empty { display: none; }
.message[data-kind="error"] { color: var(--bad); }
.muted { color: var(--muted); }
main { padding: 0 20px 20px; display: grid; gap: 14px; }
.list { background: var(--card); border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.list h2 { margin: 0; padding: 8px 12px; font-size: 13px; font-weight: 650; border-bottom: 1px solid var(--line); }
.list .empty { margin: 0; padding: 10px 12px; color: var(--muted); }
.list[data-filled] .empty { display: none; }
.table { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; min-width: 140px; max-width: 320px; overflow-wrap: anywhere; }
th { font-weight: 600; color: var(--muted); font-size: 12px; background: #fafbfd; }
tr:last-child td { border-bottom: 0; }
a { color: var(--accent); }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 11px; font-weight: 650; letter-spacing: .2px; background: var(--wait-bg); color: var(--wait); }
.badge[data-tone="ok"] { background: var(--ok-bg); color: var(--ok); }
.badge[data-tone="bad"] { background: var(--bad-bg); color: var(--bad); }
.badge[data-tone="run"] { background: var(--run-bg); color: var(--run); }
.error { color: var(--bad); }
.sub { display: block; color: var(--muted); font-size: 12px; }
.links a { margin-right: 8px; }
.actions { display: flex; gap: 4px; }
footer { padding: 4px 20px 20px; color: var(--muted); font-size: 12px; }
`
