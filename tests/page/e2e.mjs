// SPDX-License-Identifier: Apache-2.0
/*
 * The agent's page end to end in real Chromium (playwright-core drives Debian's
 * /usr/bin/chromium), against a real agent: run by tests/integration/test_page.sh, which starts
 * the agent, the workload and sets the environment:
 *
 *   BASE             the agent's URL (http://127.0.0.1:PORT)
 *   OPERATOR_TOKEN, VIEWER_TOKEN, ADMIN_TOKEN   API tokens of each role
 *   SERVICE          the Service the workload belongs to (billing)
 *   HOT_BEFORE       the workload's hot function at first (build_report)
 *   HOT_AFTER        its hot function once SWITCH_CMD has run (checkout_loop)
 *   SWITCH_CMD       a shell command that replaces the workload with the second one
 *   PW_MODULES       the node_modules holding playwright-core (/var/cache/slideops-test/npm/node_modules)
 *   OUT              a scratch directory (downloads)
 *   SYMBOLS_FILE     an ELF file with a build id and .symtab to upload as debug symbols
 *   SCREENSHOTS=1    also write docs/img/performance-tab.png, profile.png, compare.png (IMG_DIR)
 *
 * Every step prints one line; the first failed check throws and exits 1 with what was seen.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const env = process.env;
const need = (k) => {
	if (!env[k])
		throw new Error(`e2e.mjs: ${k} is not set`);
	return env[k];
};
const BASE = need('BASE').replace(/\/$/, '');
const ORIGIN = new URL(BASE).origin;
const OPERATOR = need('OPERATOR_TOKEN');
const VIEWER = need('VIEWER_TOKEN');
const ADMIN = need('ADMIN_TOKEN');
const SERVICE = env.SERVICE || 'billing';
const HOT_BEFORE = env.HOT_BEFORE || 'build_report';
const HOT_AFTER = env.HOT_AFTER || 'checkout_loop';
const OUT = need('OUT');
const SYMBOLS_FILE = need('SYMBOLS_FILE');
const SHOTS = env.SCREENSHOTS === '1';
const IMG = env.IMG_DIR || '';
const require = createRequire(join(need('PW_MODULES'), 'x.js'));
const { chromium } = require('playwright-core');

const t0 = Date.now();
const secs = () => ((Date.now() - t0) / 1000).toFixed(1).padStart(5);
const step = (m) => console.log(`[${secs()} s] ${m}`);
function check(cond, msg) {
	if (!cond)
		throw new Error(msg);
}

/* The API with a bearer token, as curl would use it (not the page's session). */
async function apiAs(token, method, path, body) {
	const res = await fetch(BASE + path, { method, headers: { Authorization: 'Bearer ' + token,
		...(body ? { 'Content-Type': 'application/json' } : {}) },
	body: body ? JSON.stringify(body) : undefined });
	const text = await res.text();
	let data = null;
	try {
		data = JSON.parse(text);
	} catch (e) {
		data = text;
	}
	return { status: res.status, data };
}
async function currentId() {
	const r = await apiAs(OPERATOR, 'GET', '/v1/captures/current');
	return r.status === 200 && r.data.id ? r.data.id : null;
}

/* ---- what every page of the browser did ---- */

const offOrigin = [];	/* requests to anything but the agent (and, for its page, the attacker) */
const consoleErrors = [];
const pageErrors = [];
const failedLoads = [];	/* "Failed to load resource" console lines: each needs an expected answer */
const errorAnswers = [];	/* answers >= 400 the page got: method, path, status */
/* The answers of 400 and above a flow may get, each on purpose: a wrong token, the refusal of a
 * second capture, the Viewer's forgeries, the comparison of two different questions. (Not being
 * signed in yet, and no capture since the agent started, are answers, not errors: 200.) */
const EXPECTED = [
	['POST', /^\/v1\/session$/, 401],
	['POST', /^\/v1\/captures$/, 409],
	['POST', /^\/v1\/captures$/, 403],
	['GET', /^\/v1\/compare$/, 400],
	['POST', /^\/v1\/symbols$/, 422], /* the refused upload of debugSymbols() */
];
let attackerOrigin = '';

function watch(page, label) {
	page.on('request', (req) => {
		const u = req.url();
		if (u.startsWith('data:') || u === 'about:blank')
			return;
		const o = new URL(u).origin;
		if (o !== ORIGIN && !(label === 'attacker' && o === attackerOrigin))
			offOrigin.push(`${label}: ${req.method()} ${u}`);
	});
	page.on('response', (res) => {
		if (res.status() < 400)
			return;
		const u = new URL(res.url());
		errorAnswers.push({ label, method: res.request().method(), path: u.pathname,
			status: res.status(), url: res.url() });
	});
	page.on('console', (m) => {
		/* The attacker's page is not ours: its fetch is blocked (the agent's
		 * Cross-Origin-Resource-Policy), which Chromium logs as an error there. */
		if (m.type() !== 'error' || label === 'attacker')
			return;
		if (/^Failed to load resource: the server responded with a status of \d+/.test(m.text()))
			failedLoads.push({ label, text: `${label}: ${m.text()} (${(m.location() || {}).url || ''})` });
		else
			consoleErrors.push(`${label}: ${m.text()} (${(m.location() || {}).url || ''})`);
	});
	page.on('pageerror', (e) => {
		if (label !== 'attacker')
			pageErrors.push(`${label}: ${e.message}`);
	});
	return page;
}

function checkConsole(where) {
	check(!consoleErrors.length, `${where}: console errors:\n  ${consoleErrors.join('\n  ')}`);
	check(!pageErrors.length, `${where}: page errors:\n  ${pageErrors.join('\n  ')}`);
	check(!offOrigin.length, `${where}: requests off the agent's origin:\n  ${offOrigin.join('\n  ')}`);
	const bad = errorAnswers.filter((a) => a.label !== 'attacker' &&
		!EXPECTED.some(([m, re, s]) => m === a.method && re.test(a.path) && s === a.status));
	check(!bad.length, `${where}: unexpected error answers:\n  ` +
		bad.map((a) => `${a.label}: ${a.method} ${a.url} -> ${a.status}`).join('\n  '));
	const mine = errorAnswers.filter((a) => a.label !== 'attacker').length;
	const loads = failedLoads.filter((f) => f.label !== 'attacker');
	check(loads.length <= mine, `${where}: more failed loads (${loads.length}) than ` +
		`error answers (${mine}):\n  ${loads.map((f) => f.text).join('\n  ')}`);
}

async function shot(page, name) {
	if (!SHOTS)
		return;
	await page.screenshot({ path: join(IMG, name), fullPage: true });
	step(`screenshot ${join(IMG, name)}`);
}

/* The fg-data block of a flame graph frame. */
async function frameData(frameHandle) {
	const f = await frameHandle.contentFrame();
	check(f, 'the flame graph frame has no document');
	await f.waitForSelector('#fg-data', { state: 'attached', timeout: 20000 });
	return JSON.parse(await f.$eval('#fg-data', (e) => e.textContent));
}

/* Sums, over the diff tree, the base and new values of the nodes named @name. */
function diffShares(d, name) {
	let base = 0, next = 0, seen = 0;
	const walk = (n) => {
		if (d.names[n[0]] === name) {
			base += n[4] || 0;
			next += n[5] || 0;
			seen++;
			return; /* not recursive here: its children are inside its values already */
		}
		for (const c of n[3] || [])
			walk(c);
	};
	walk(d.tree);
	return { seen, base: d.base_total ? base / d.base_total : 0,
		next: d.next_total ? next / d.next_total : 0 };
}

async function signIn(page, token) {
	await page.goto(BASE + '/');
	await page.waitForSelector('[data-testid=token]');
	await page.fill('[data-testid=token]', token);
	await page.click('[data-testid=sign-in]');
	await page.waitForSelector('[data-testid=sign-out]:visible');
}

async function signOut(page) {
	await page.click('[data-testid=sign-out]');
	await page.waitForSelector('[data-testid=signin-form]');
}

async function openService(page) {
	const link = page.locator(`[data-testid=nav-service][data-service="${SERVICE}"]`);
	await link.waitFor({ timeout: 15000 });
	await link.click();
	await page.waitForSelector('#ready-banner.ok, #ready-banner.bad', { timeout: 30000 });
	await page.waitForSelector('#plan-steps li:not(.muted)', { timeout: 20000 });
}

async function capture(page, label) {
	await page.check('[data-testid=question-cpu]');
	await page.check('[data-testid=duration-10]');
	check(await page.textContent('[data-testid=capture-button]') === 'Capture for 10 seconds',
		'the button does not say "Capture for 10 seconds"');
	await page.click('[data-testid=capture-button]');
	await page.waitForSelector('[data-testid=progress-card]', { timeout: 10000 });
	const card = page.locator('[data-testid=progress-step]');
	await page.waitForFunction(() => /^Step \d+ of \d+: ./.test(
		(document.querySelector('[data-testid=progress-step]') || {}).textContent || ''), null,
	{ timeout: 10000 });
	step(`${label}: progress card: "${await card.textContent()}", ` +
		`"${await page.textContent('[data-testid=progress-elapsed]')}"`);
}

async function waitProfile(page, label) {
	await page.waitForURL(/#\/profile\/[^/]+$/, { timeout: 90000 });
	const id = decodeURIComponent(page.url().replace(/^.*#\/profile\//, ''));
	await page.waitForSelector('[data-testid=profile-title]', { timeout: 20000 });
	step(`${label}: its profile opened by itself: ${id}: ` +
		`"${await page.textContent('[data-testid=answer]')}"`);
	return id;
}

async function download(page, testid) {
	const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }),
		page.click(`[data-testid=${testid}]`)]);
	const path = join(OUT, testid + '-' + dl.suggestedFilename());
	await dl.saveAs(path);
	return { name: dl.suggestedFilename(), bytes: readFileSync(path) };
}

/* ---- the flows ---- */

/* The Debug symbols panel: a refusal in the seed's words, an upload listed, then deleted. */
async function debugSymbols(page) {
	const panel = '[data-testid=debug-symbols]';
	await page.waitForSelector(`${panel} [data-testid=symbols-list]`, { timeout: 10000 });
	const notElf = join(OUT, 'notes.txt');
	writeFileSync(notElf, 'not an ELF file\n');
	await page.setInputFiles('[data-testid=symbols-upload-file]', notElf);
	const refused = '[data-testid=symbols-upload-result].error';
	await page.waitForSelector(refused, { timeout: 10000 });
	const why = await page.textContent(refused);
	check(why.includes('this is not an ELF binary or debug file'), `the refusal reads "${why}"`);
	await page.setInputFiles('[data-testid=symbols-upload-file]', SYMBOLS_FILE);
	await page.waitForSelector(`${panel} [data-testid=symbols-row]`, { timeout: 10000 });
	const result = await page.textContent('[data-testid=symbols-upload-result]');
	check(/named \d+ functions of build [0-9a-f]{12}/.test(result), `the upload says "${result}"`);
	const row = await page.textContent(`${panel} [data-testid=symbols-row]`);
	const name = SYMBOLS_FILE.split('/').pop();
	check(row.includes(name), `the uploads list lacks ${name}: "${row}"`);
	await page.click(`${panel} [data-testid=symbols-delete]`);
	await page.click('[data-testid=confirm-ok]');
	await page.waitForSelector(`${panel} [data-testid=symbols-row]`, { state: 'detached', timeout: 10000 });
	const left = await apiAs(OPERATOR, 'GET', '/v1/symbols');
	check(left.status === 200 && left.data.uploads.length === 0, 'the upload was not deleted');
	step(`debug symbols: "${why}"; ${name} uploaded ("${result}"), listed, deleted`);
}

async function main() {
	const browser = await chromium.launch({
		executablePath: env.CHROMIUM || '/usr/bin/chromium',
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	try {
		await flows(browser);
	} finally {
		await browser.close();
	}
}

async function flows(browser) {
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 },
		acceptDownloads: true });
	const page = watch(await ctx.newPage(), 'tab1');

	/* 1. A wrong token is refused, in words. */
	await page.goto(BASE + '/');
	await page.waitForSelector('[data-testid=signin-form]');
	check(await page.locator('[data-testid=sign-out]').count() === 0, 'Sign out shown before sign-in');
	await page.fill('[data-testid=token]', 'not-a-token-of-this-agent-0000');
	await page.click('[data-testid=sign-in]');
	await page.waitForSelector('[data-testid=signin-error]:visible');
	const wrong = await page.textContent('[data-testid=signin-error]');
	check(/unknown token/.test(wrong), `a wrong token shows "${wrong}", not "unknown token"`);
	step(`wrong token: "${wrong}"`);

	/* 2. The operator signs in: the server tab, Ready, the runtimes of real processes. */
	await page.fill('[data-testid=token]', OPERATOR);
	await page.click('[data-testid=sign-in]');
	await page.waitForSelector('[data-testid=sign-out]:visible');
	check(await page.textContent('[data-testid=who-role]') === 'Operator', 'the role shown is not Operator');
	const cookies = await ctx.cookies();
	const sc = cookies.find((c) => c.name === 'slideops_session');
	check(sc && sc.httpOnly && sc.sameSite === 'Strict', 'the session cookie is not HttpOnly, SameSite=Strict: ' +
		JSON.stringify(sc));
	check(!(await page.evaluate(() => document.cookie)).includes('slideops_session'),
		'the session cookie is readable from script');
	check(!page.url().includes(OPERATOR) && !(await page.evaluate(() =>
		JSON.stringify(localStorage) + JSON.stringify(sessionStorage))).includes(OPERATOR),
	'the token is in the URL or in web storage');
	await page.waitForSelector('#ready-banner.ok', { timeout: 30000 });
	const ready = await page.textContent('#ready-banner');
	check(/^Ready to profile/.test(ready), `the server tab says "${ready}"`);
	const runtimes = await page.$$eval('#runtimes li', (l) => l.map((e) => e.textContent));
	check(runtimes.some((t) => /^native × \d+ process(es)?$/.test(t)),
		`no "native × N processes" among the runtimes: ${JSON.stringify(runtimes)}`);
	await page.waitForSelector('[data-testid=busy-row]', { timeout: 15000 });
	const busy = await page.$$eval('[data-testid=busy-row]', (r) => r.map((e) => e.textContent));
	check(busy.length >= 1 && busy.length <= 10, `busiest processes: ${busy.length} rows`);
	check(await page.locator('text=averages since each process started').count() === 1,
		'the busiest processes do not say their figures are averages since the start');
	check(await page.locator('[data-testid=remove-profiler]').count() === 0,
		'an Operator sees Remove the profiler');
	check(await page.locator('summary', { hasText: 'Which languages can be profiled?' }).count() === 1,
		'no "Which languages can be profiled?"');
	step(`server tab: "${ready}", runtimes ${JSON.stringify(runtimes)}, ${busy.length} busiest processes`);

	/* 3. The Service tab: the form, its questions, durations and plan. */
	await openService(page);
	check(page.url().endsWith('#/service/' + SERVICE), `the Service tab is at ${page.url()}`);
	const sready = await page.textContent('#ready-banner');
	check(/^Ready to profile/.test(sready), `the Service tab says "${sready}"`);
	const sruntimes = await page.$$eval('#runtimes li', (l) => l.map((e) => e.textContent));
	check(sruntimes.length === 1 && /^native( × 1 process)?$/.test(sruntimes[0]),
		`the Service's runtimes are ${JSON.stringify(sruntimes)}, not its one native process`);
	for (const legend of ['What do you want to know?', 'For how long?'])
		check(await page.locator('legend', { hasText: legend }).count() === 1, `no "${legend}"`);
	check(await page.locator('h3', { hasText: 'What SlideOps will do' }).count() === 1,
		'no "What SlideOps will do"');
	check(await page.isChecked('[data-testid=duration-30]'), '30 seconds is not the default');
	check(await page.textContent('[data-testid=capture-button]') === 'Capture for 30 seconds',
		'the button does not say "Capture for 30 seconds"');
	check(await page.isDisabled('[data-testid=question-memory-held]'),
		'"What is holding memory" is offered for a native Service');
	const reason = await page.locator('label:has([data-testid=question-memory-held]) .reason').textContent();
	check(reason.length > 10, 'the unavailable question has no reason');
	await page.check('[data-testid=question-threads]');
	await page.waitForFunction(() => document.querySelector('[data-testid=capture-button]')
		.textContent === 'Take a 5 second snapshot');
	check(await page.isDisabled('[data-testid=duration-10]'), 'durations are offered for threads');
	check(await page.isVisible('text=The threads snapshot always takes 5 seconds.'),
		'no "The threads snapshot always takes 5 seconds."');
	await page.check('[data-testid=question-cpu]');
	const planHas = (re) => page.waitForFunction((src) => [...document.querySelectorAll('#plan-steps li')]
		.some((e) => new RegExp(src).test(e.textContent)), re, { timeout: 10000 }).catch(async () => {
		throw new Error(`the plan does not say /${re}/: ${await page.textContent('#plan-steps')}`);
	});
	await planHas('\\b30 seconds\\b');
	await page.check('[data-testid=duration-10]');
	await planHas('\\b10 seconds\\b');
	const plan10 = await page.$$eval('#plan-steps li', (l) => l.map((e) => e.textContent));
	step(`Service tab: "${sready}", ${sruntimes}; plan of ${plan10.length} steps`);

	/* 4. A "Finding out why" link: the note, and its question chosen. */
	await page.goto(BASE + '/#/service/' + SERVICE +
		'?question=wall&why=Latency%20of%20POST%20%2Fpay%20doubled');
	await page.waitForSelector('[data-testid=why-note]', { timeout: 30000 });
	const why = await page.textContent('[data-testid=why-note]');
	check(why === 'You came here because: Latency of POST /pay doubled', `the note says "${why}"`);
	check(await page.isChecked('[data-testid=question-wall]'), 'the link did not choose its question');
	step(`finding out why: "${why}", question wall chosen`);
	await page.goto(BASE + '/#/server');
	await openService(page);

	/* 5. A capture with its progress card; a second one, from another tab, is refused. */
	const before = await currentId();
	await capture(page, 'capture 1');
	const tab2 = watch(await ctx.newPage(), 'tab2');
	await tab2.goto(BASE + '/#/server');
	await tab2.waitForSelector('[data-testid=capture-button]:enabled', { timeout: 30000 });
	await tab2.check('[data-testid=duration-10]');
	await tab2.click('[data-testid=capture-button]');
	await tab2.waitForSelector('[data-testid=refusal]:visible', { timeout: 10000 });
	const refusal = await tab2.textContent('[data-testid=refusal]');
	check(refusal === 'a capture is already running on this server', `the refusal says "${refusal}"`);
	step(`second capture, from tab 2: refused: "${refusal}"`);
	await tab2.close();
	const firstId = await waitProfile(page, 'capture 1');
	check(firstId !== before, 'the profile is the one of the capture before');

	/* 6. The profile: title, answer, flame graph, downloads. */
	const title = await page.textContent('[data-testid=profile-title]');
	check(title === `What is using the CPU: Service ${SERVICE}, 10 seconds`, `the title is "${title}"`);
	const answer = await page.textContent('[data-testid=answer]');
	check(answer.includes(HOT_BEFORE), `the answer does not name ${HOT_BEFORE}: "${answer}"`);
	const fg = await page.waitForSelector('[data-testid=profile-frame]');
	const fgData = await frameData(fg);
	check(fgData.total > 0 && JSON.stringify(fgData.names).includes(HOT_BEFORE),
		`the flame graph does not hold ${HOT_BEFORE}`);
	const fgFrame = await fg.contentFrame();
	await fgFrame.waitForSelector('canvas', { timeout: 10000 });
	const pprof = await download(page, 'download-pprof');
	check(pprof.bytes[0] === 0x1f && pprof.bytes[1] === 0x8b,
		`the pprof file does not start with the gzip magic: ${pprof.bytes.subarray(0, 4).toString('hex')}`);
	const coll = await download(page, 'download-collapsed');
	const lines = coll.bytes.toString('utf8').trim().split('\n');
	check(lines.length >= 1 && lines.every((l) => /^\S.* \d+$/.test(l)),
		`the collapsed stacks are not "frame;frame count" lines: ${lines.slice(0, 3)}`);
	check(lines.some((l) => l.includes(HOT_BEFORE)), `no collapsed stack holds ${HOT_BEFORE}`);
	step(`profile: "${title}"; pprof ${pprof.name} ${pprof.bytes.length} bytes, collapsed ` +
		`${coll.name} ${lines.length} lines`);
	await page.waitForTimeout(600);
	await shot(page, 'profile.png');

	/* 7. Past profiles lists it; the second capture, once the hot function changed. */
	await page.click('[data-testid=back]');
	await page.waitForSelector(`[data-testid=profile-row][data-id="${firstId}"]`, { timeout: 15000 });
	const row1 = await page.textContent(`[data-testid=profile-row][data-id="${firstId}"]`);
	check(row1.includes(HOT_BEFORE) && row1.includes('10 seconds') && /Native/.test(row1),
		`the past profile row lacks answer, length or languages: "${row1}"`);
	step(`past profiles lists ${firstId}`);
	await debugSymbols(page);
	execFileSync('bash', ['-c', need('SWITCH_CMD')], { stdio: 'inherit' });
	step(`workload switched: ${HOT_BEFORE} -> ${HOT_AFTER}`);
	await page.waitForSelector('[data-testid=capture-button]:enabled', { timeout: 20000 });
	await capture(page, 'capture 2');
	/* The page can be left and opened again: the card is back, and the profile still opens. */
	await page.reload();
	await page.waitForSelector('[data-testid=progress-card]', { timeout: 20000 });
	step('capture 2: the card is shown again after a reload');
	const secondId = await waitProfile(page, 'capture 2');
	const answer2 = await page.textContent('[data-testid=answer]');
	check(answer2.includes(HOT_AFTER), `the second answer does not name ${HOT_AFTER}: "${answer2}"`);

	/* 8. Compare: tick two, the differential flame graph, its collapsed lines. */
	await page.click('[data-testid=back]');
	await page.waitForSelector(`[data-testid=profile-row][data-id="${secondId}"]`, { timeout: 15000 });
	const cmp = page.locator('[data-testid=compare-ticked]');
	check(await cmp.isDisabled(), 'Compare is enabled with nothing ticked');
	await page.check(`[data-testid=profile-row][data-id="${secondId}"] [data-testid=tick]`);
	check(await cmp.isDisabled(), 'Compare is enabled with one ticked');
	await page.check(`[data-testid=profile-row][data-id="${firstId}"] [data-testid=tick]`);
	check(await cmp.isEnabled(), 'Compare is disabled with two of the same type ticked');
	const prevHref = await page.getAttribute(`[data-testid=profile-row][data-id="${secondId}"] ` +
		'[data-testid=compare-previous]', 'href');
	check(prevHref === `#/compare/${encodeURIComponent(firstId)}/${encodeURIComponent(secondId)}`,
		`"Compare with the one before" goes to ${prevHref}`);
	await page.waitForTimeout(300);
	await shot(page, 'performance-tab.png');
	await cmp.click();
	await page.waitForURL(new RegExp('#/compare/' + encodeURIComponent(firstId) + '/' +
		encodeURIComponent(secondId) + '$'));
	await page.waitForSelector('[data-testid=compare-new] .answer', { timeout: 15000 });
	const sides = await page.$$eval('[data-testid=compare-base] .answer, [data-testid=compare-new] .answer',
		(l) => l.map((e) => e.textContent));
	check(sides.length === 2 && sides[0].includes(HOT_BEFORE) && sides[1].includes(HOT_AFTER),
		`the two answers above the comparison: ${JSON.stringify(sides)}`);
	const df = await page.waitForSelector('[data-testid=compare-frame]', { timeout: 20000 });
	const dd = await frameData(df);
	check(dd.diff === true, 'the compare frame is not a differential flame graph');
	const grew = diffShares(dd, HOT_AFTER), shrank = diffShares(dd, HOT_BEFORE);
	check(grew.seen && grew.next > grew.base + 0.3,
		`${HOT_AFTER} did not grow in the diff: ${JSON.stringify(grew)}`);
	check(shrank.seen && shrank.base > shrank.next + 0.3,
		`${HOT_BEFORE} did not shrink in the diff: ${JSON.stringify(shrank)}`);
	await (await df.contentFrame()).waitForSelector('canvas', { timeout: 10000 });
	const diff = await download(page, 'download-diff');
	const dlines = diff.bytes.toString('utf8').trim().split('\n');
	check(dlines.every((l) => /^\S.* \d+ \d+$/.test(l)) &&
		dlines.some((l) => l.includes(HOT_AFTER)),
	`the differential collapsed stacks are not "stack base new" lines: ${dlines.slice(0, 3)}`);
	step(`compare: ${HOT_AFTER} grew ${(100 * grew.base).toFixed(1)}% -> ${(100 * grew.next).toFixed(1)}%, ` +
		`${HOT_BEFORE} shrank ${(100 * shrank.base).toFixed(1)}% -> ${(100 * shrank.next).toFixed(1)}%; ` +
		`difffolded ${dlines.length} lines`);
	await page.waitForTimeout(600);
	await shot(page, 'compare.png');

	/* 8b. Continuous profiling keeps the hour before: the second profile compares with it. */
	await page.goto(BASE + '/#/profile/' + encodeURIComponent(secondId));
	const hourLink = await page.waitForSelector('[data-testid=compare-continuous]', { timeout: 15000 });
	check((await hourLink.getAttribute('href')) === `#/compare/continuous/${encodeURIComponent(secondId)}`,
		`"Compare with the hour before" goes to ${await hourLink.getAttribute('href')}`);
	await hourLink.click();
	await page.waitForSelector('[data-testid=compare-base] .answer', { timeout: 15000 });
	const hourSide = await page.textContent('[data-testid=compare-base]');
	check(hourSide.includes('The hour before') && hourSide.includes('Continuous profiling'),
		`the Before side of the hour before: "${hourSide}"`);
	const hf = await page.waitForSelector('[data-testid=compare-frame]', { timeout: 20000 });
	const hd = await frameData(hf);
	const hb = diffShares(hd, HOT_BEFORE);
	check(hd.diff === true && hb.seen && hb.base > hb.next,
		`${HOT_BEFORE} of the hour before did not shrink in capture 2: ${JSON.stringify(hb)}`);
	step(`compare with the hour before: ${HOT_BEFORE} ${(100 * hb.base).toFixed(1)}% -> ` +
		`${(100 * hb.next).toFixed(1)}%`);

	/* 9. A threads snapshot: its button, its table; it does not compare with a CPU profile. */
	await page.goto(BASE + '/#/service/' + SERVICE);
	await page.waitForSelector('[data-testid=capture-button]:enabled', { timeout: 30000 });
	await page.check('[data-testid=question-threads]');
	await page.waitForFunction(() => document.querySelector('[data-testid=capture-button]')
		.textContent === 'Take a 5 second snapshot');
	await page.click('[data-testid=capture-button]');
	await page.waitForSelector('[data-testid=progress-card]', { timeout: 10000 });
	const threadsId = await waitProfile(page, 'threads snapshot');
	const ttitle = await page.textContent('[data-testid=profile-title]');
	check(ttitle === `What every thread is doing right now: Service ${SERVICE}, 5 seconds`,
		`the snapshot's title is "${ttitle}"`);
	await page.waitForSelector('[data-testid=threads-table] tbody tr', { timeout: 10000 });
	const trows = await page.$$eval('[data-testid=threads-table] tbody tr', (l) => l.map((e) => e.textContent));
	check(trows.some((t) => t.includes(HOT_AFTER)), `no thread of the table is in ${HOT_AFTER}: ${trows}`);
	await page.goto(BASE + '/#/compare/' + encodeURIComponent(secondId) + '/' + encodeURIComponent(threadsId));
	await page.waitForSelector('[data-testid=compare-error]', { timeout: 15000 });
	const cerr = await page.textContent('[data-testid=compare-error]');
	check(/answer different questions/.test(cerr), `comparing cpu with threads says "${cerr}"`);
	check(await page.locator('[data-testid=compare-frame]').count() === 0,
		'a comparison of two questions still shows a frame');
	step(`threads snapshot ${threadsId}: ${trows.length} threads; compare with cpu: "${cerr}"`);
	await page.goto(BASE + '/#/service/' + SERVICE);
	await page.waitForSelector(`[data-testid=profile-row][data-id="${threadsId}"]`, { timeout: 15000 });
	await page.check(`[data-testid=profile-row][data-id="${threadsId}"] [data-testid=tick]`);
	await page.check(`[data-testid=profile-row][data-id="${secondId}"] [data-testid=tick]`);
	check(await page.isDisabled('[data-testid=compare-ticked]'),
		'Compare is enabled for two profiles of different types');
	check(await page.locator(`[data-testid=profile-row][data-id="${threadsId}"] ` +
		'[data-testid=compare-previous]').count() === 0, 'the first snapshot has a "one before"');

	/* 10. Delete one (behind the page's own dialog); the Profiles page and its filters. */
	const delBtn = `[data-testid=profile-row][data-id="${firstId}"] [data-testid=delete-profile]`;
	await page.waitForSelector(delBtn, { timeout: 15000 });
	await page.click(delBtn);
	await page.waitForSelector('[data-testid=confirm-dialog][open]');
	await page.click('[data-testid=confirm-cancel]');
	check(await page.locator(`[data-testid=profile-row][data-id="${firstId}"]`).count() === 1,
		'Cancel deleted the profile');
	await page.click(delBtn);
	await page.click('[data-testid=confirm-ok]');
	await page.waitForSelector(`[data-testid=profile-row][data-id="${firstId}"]`,
		{ state: 'detached', timeout: 10000 });
	check((await apiAs(OPERATOR, 'GET', '/v1/profiles/' + encodeURIComponent(firstId))).status === 404,
		'the deleted profile is still there');
	step(`deleted ${firstId}`);
	await page.click('[data-testid=nav-profiles]');
	await page.waitForSelector(`[data-testid=profile-row][data-id="${secondId}"]`, { timeout: 15000 });
	await page.selectOption('[data-testid=filter-service]', SERVICE);
	await page.selectOption('[data-testid=filter-question]', 'cpu');
	await page.waitForURL(/#\/profiles\?service=.*&question=cpu$/);
	await page.waitForSelector(`[data-testid=profile-row][data-id="${secondId}"]`, { timeout: 15000 });
	await page.selectOption('[data-testid=filter-question]', 'wall');
	await page.waitForSelector('[data-testid=no-profiles]', { timeout: 15000 });
	step('Profiles page: filtered by Service and type');

	/* 11. Sign out: the session is gone. */
	await signOut(page);
	const after = await page.evaluate(async () => {
		const r = await fetch('/v1/session');
		return { status: r.status, signedIn: (await r.json()).signed_in };
	});
	check(after.status === 200 && after.signedIn === false,
		`after Sign out, GET /v1/session answers ${JSON.stringify(after)}`);
	step('signed out');
	checkConsole('operator flows');

	/* 12. A Viewer sees no Capture and no Delete, and forged requests are refused. */
	await signIn(page, VIEWER);
	check(await page.textContent('[data-testid=who-role]') === 'Viewer', 'the role shown is not Viewer');
	await openService(page);
	await page.waitForSelector(`[data-testid=profile-row][data-id="${secondId}"]`, { timeout: 15000 });
	check(await page.locator('[data-testid=capture-button]').count() === 0, 'a Viewer sees Capture');
	check(await page.locator('[data-testid=delete-profile]').count() === 0, 'a Viewer sees Delete');
	check(await page.isVisible('[data-testid=viewer-note]'), 'a Viewer is not told why there is no Capture');
	await page.click(`[data-testid=profile-row][data-id="${secondId}"] [data-testid=open-profile]`);
	await page.waitForSelector('[data-testid=profile-title]');
	check(await page.locator('[data-testid=delete-profile]').count() === 0,
		'a Viewer sees Delete on a profile');
	check(await page.isVisible('[data-testid=download-pprof]'), 'a Viewer cannot download');
	const idBefore = await currentId();
	const forged = await page.evaluate(async (svc) => {
		const s = await (await fetch('/v1/session')).json();
		const body = JSON.stringify({ target: 'service:' + svc, question: 'cpu', duration: 10 });
		const post = async (h) => (await fetch('/v1/captures', { method: 'POST',
			credentials: 'same-origin', headers: { 'Content-Type': 'application/json', ...h },
			body })).status;
		return { without: await post({}), with: await post({ 'X-SlideOps-CSRF': s.csrf }) };
	}, SERVICE);
	check(forged.without === 403 && forged.with === 403,
		`a Viewer's forged captures answer ${JSON.stringify(forged)}, not 403`);
	check(await currentId() === idBefore, 'a Viewer\'s forged capture started one');
	step(`Viewer: no Capture, no Delete; forged POST /v1/captures -> ${forged.without} without CSRF, ` +
		`${forged.with} with`);
	await signOut(page);

	/* 13. An admin sees Remove the profiler, behind a dialog in the seed's words (cancelled). */
	await signIn(page, ADMIN);
	await page.goto(BASE + '/#/server');
	await page.waitForSelector('[data-testid=remove-profiler]', { timeout: 15000 });
	check(await page.textContent('[data-testid=remove-profiler]') === 'Remove the profiler from this server',
		'the remove button is not "Remove the profiler from this server"');
	await page.click('[data-testid=remove-profiler]');
	await page.waitForSelector('[data-testid=confirm-dialog][open]');
	const dlg = await page.textContent('[data-testid=confirm-dialog]');
	check(/next capture installs it again/.test(dlg), `the dialog says "${dlg}"`);
	await page.click('[data-testid=confirm-cancel]');
	await page.waitForSelector('[data-testid=confirm-dialog]:not([open])', { state: 'attached' });
	check((await apiAs(ADMIN, 'GET', '/v1/profiles/' + encodeURIComponent(secondId))).status === 200,
		'cancelling the removal removed something');
	step('admin: Remove the profiler, dialog shown and cancelled');
	await signOut(page);

	/* 14. Another origin (same site: another port of 127.0.0.1) posts to the agent with the
	 *     operator's cookie: refused, and no capture starts. */
	await signIn(page, OPERATOR);
	await cross(ctx);
	await signOut(page);

	/* 15. Last, as it stops the agent: the admin removes the profiler, confirmed. */
	await signIn(page, ADMIN);
	await page.goto(BASE + '/#/server');
	await page.waitForSelector('[data-testid=remove-profiler]', { timeout: 15000 });
	await page.click('[data-testid=remove-profiler]');
	await page.waitForSelector('[data-testid=confirm-dialog][open]');
	await page.click('[data-testid=confirm-ok]');
	await page.waitForSelector('[data-testid=removed]', { timeout: 15000 });
	step('admin: Remove the profiler, confirmed: removed');
	checkConsole('all flows');
	await ctx.close();
}

async function cross(ctx) {
	const target = BASE + '/v1/captures';
	const html = `<!DOCTYPE html><html><body>
<form id="f" method="POST" action="${target}" enctype="text/plain">
<input name='{"target":"service:${SERVICE}","question":"cpu","duration":10,"x":"' value='"}'>
</form>
<script>
fetch(${JSON.stringify(target)}, {method: 'POST', mode: 'no-cors', credentials: 'include',
  headers: {'Content-Type': 'text/plain'},
  body: JSON.stringify({target: 'service:${SERVICE}', question: 'cpu', duration: 10})})
  .catch(() => {}).then(() => document.getElementById('f').submit());
</script></body></html>`;
	const srv = createServer((req, res) => {
		res.writeHead(200, { 'Content-Type': 'text/html' });
		res.end(html);
	});
	await new Promise((r) => srv.listen(0, '127.0.0.1', r));
	attackerOrigin = `http://127.0.0.1:${srv.address().port}`;
	try {
		const idBefore = await currentId();
		const page = watch(await ctx.newPage(), 'attacker');
		const answers = [], sent = [];
		page.on('request', (r) => {
			if (r.url() === target)
				sent.push(r.method());
		});
		page.on('response', (r) => {
			if (r.url() === target)
				answers.push(r.status());
		});
		await page.goto(attackerOrigin + '/');
		await page.waitForURL(target, { timeout: 15000 });
		await page.waitForLoadState();
		await page.waitForTimeout(500);
		/* The form's answer is seen; the fetch's is withheld from the page by the browser. */
		check(sent.length === 2, `the attacker's page sent ${sent.length} requests, not 2 (fetch, form)`);
		check(answers.length >= 1 && answers.every((s) => s === 403),
			`the cross-site POSTs answered ${JSON.stringify(answers)}, not 403`);
		check(await currentId() === idBefore, 'a cross-site POST started a capture');
		step(`cross-site: ${sent.length} POSTs from ${attackerOrigin} (fetch, form): ` +
			`answered ${answers}, no capture started`);
		await page.close();
	} finally {
		srv.close();
	}
}

main().then(() => {
	step('PASS');
}, (e) => {
	console.error(`[${secs()} s] FAIL: ${e && e.stack || e}`);
	process.exit(1);
});
