// SPDX-License-Identifier: Apache-2.0
/*
 * The agent's page (docs/page.md): the Performance tab of the server and of each Service, the
 * Profiles page, one profile and the comparison of two. Plain JavaScript for the agent's CSP
 * (script-src 'self'): no inline code, no eval, no innerHTML; every text from the server is
 * set with textContent. The session is a cookie the agent sets (HttpOnly); the CSRF value it
 * returns is kept in this file's state only and sent on every POST and DELETE.
 */
'use strict';

(function () {
	const QUESTIONS = [
		['cpu', 'What is using the CPU'],
		['wall', 'Where time goes, including waiting'],
		['threads', 'What every thread is doing right now'],
		['locks', 'What is waiting on locks'],
		['memory-growth', 'Where memory grows'],
		['memory-held', 'What is holding memory'],
		['memory-alloc', 'Where memory is allocated'],
	];
	const QTEXT = Object.fromEntries(QUESTIONS);
	const DURATIONS = [10, 30, 60];
	const ROLES = { viewer: 'Viewer', operator: 'Operator', admin: 'Admin' };
	const LANGS = {
		native: 'Native', kernel: 'Kernel', go: 'Go', java: 'Java', python: 'Python',
		node: 'Node.js', ruby: 'Ruby',
	};
	const LIST_LIMIT = 50;

	const S = {
		me: null,		/* {name, role} of the session */
		csrf: '',		/* sent as X-SlideOps-CSRF; never stored anywhere else */
		services: [],		/* /v1/processes services[] */
		gen: 0,			/* bumped on every render: async work of an old view stops */
		view: null,		/* the view shown: {kind, target, ...} */
		watch: null,		/* the capture this tab follows: {id, target} */
		pollTimer: 0,
		afterSignIn: '',
	};

	/* ---- DOM helpers ---- */

	/* el('div', {class: 'x', text: 'y', testid: 'z', on: {click: fn}}, child, ...) */
	function el(tag, attrs, ...children) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (v === undefined || v === null || v === false)
				continue;
			if (k === 'text')
				e.textContent = String(v);
			else if (k === 'class')
				e.className = v;
			else if (k === 'testid')
				e.dataset.testid = v;
			else if (k === 'on')
				for (const [ev, fn] of Object.entries(v))
					e.addEventListener(ev, fn);
			else if (k === 'hidden' || k === 'disabled' || k === 'checked' || k === 'open')
				e[k] = !!v;
			else
				e.setAttribute(k, v === true ? '' : String(v));
		}
		add(e, children);
		return e;
	}
	function add(parent, children) {
		for (const c of children.flat(Infinity)) {
			if (c === undefined || c === null || c === false)
				continue;
			parent.appendChild(typeof c === 'string' || typeof c === 'number' ?
				document.createTextNode(String(c)) : c);
		}
		return parent;
	}
	function clear(e) {
		while (e.firstChild)
			e.removeChild(e.firstChild);
		return e;
	}
	const $ = (sel, root) => (root || document).querySelector(sel);
	const enc = encodeURIComponent;

	/* ---- the API ---- */

	class ApiError extends Error {
		constructor(status, message) {
			super(message);
			this.status = status;
		}
	}

	async function api(method, path, body) {
		const headers = { Accept: 'application/json' };
		if (method !== 'GET' && S.csrf)
			headers['X-SlideOps-CSRF'] = S.csrf;
		const opts = { method, headers, credentials: 'same-origin', cache: 'no-store' };
		if (body !== undefined) {
			headers['Content-Type'] = 'application/json';
			opts.body = JSON.stringify(body);
		}
		let res;
		try {
			res = await fetch(path, opts);
		} catch (e) {
			throw new ApiError(0, 'The agent did not answer: ' + (e && e.message || e));
		}
		const text = await res.text();
		let data = null;
		try {
			data = text ? JSON.parse(text) : null;
		} catch (e) {
			data = null;
		}
		if (!res.ok) {
			const msg = data && typeof data.error === 'string' ? data.error :
				'the agent answered HTTP ' + res.status;
			if (res.status === 401 && !path.startsWith('/v1/session') && S.me)
				sessionEnded();
			throw new ApiError(res.status, msg);
		}
		return data;
	}

	/* POST /v1/symbols: the file is the body, streamed by the browser (up to 1 GB). */
	async function uploadSymbols(file) {
		const headers = { Accept: 'application/json', 'Content-Type': 'application/octet-stream' };
		if (S.csrf)
			headers['X-SlideOps-CSRF'] = S.csrf;
		let res;
		try {
			res = await fetch('/v1/symbols?name=' + enc(file.name), { method: 'POST', headers,
				body: file, credentials: 'same-origin', cache: 'no-store' });
		} catch (e) {
			throw new ApiError(0, 'The agent did not answer: ' + (e && e.message || e));
		}
		let data = null;
		try {
			data = await res.json();
		} catch (e) {
			data = null;
		}
		if (!res.ok)
			throw new ApiError(res.status, data && typeof data.error === 'string' ? data.error :
				'the agent answered HTTP ' + res.status);
		return data;
	}

	/* ---- formatting ---- */

	function pad(n) {
		return String(n).padStart(2, '0');
	}
	function fmtTime(iso) {
		const d = new Date(iso);
		if (!iso || isNaN(d))
			return iso || '';
		return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' +
			pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
	}
	function fmtLength(s) {
		return s === 1 ? '1 second' : (s | 0) + ' seconds';
	}
	function fmtLangs(list) {
		return (list || []).map((l) => LANGS[l] || l).join(', ');
	}
	function fmtPercent(x) {
		const v = Number(x) || 0;
		return (v >= 10 || v === 0 ? Math.round(v) : v.toFixed(1)) + '%';
	}
	function qtext(id) {
		return QTEXT[id] || id;
	}
	function upper1(s) {
		return s ? s[0].toUpperCase() + s.slice(1) : s;
	}
	function canCapture() {
		return !!S.me && (S.me.role === 'operator' || S.me.role === 'admin');
	}

	/* Targets, hash routes and the `service=` of /v1/profiles, from a Service's name and
	 * namespace (namespace '' for a Service of a config rule). */
	function svcTarget(ns, name) {
		return 'service:' + (ns ? ns + '/' : '') + name;
	}
	function svcRoute(ns, name) {
		return '#/service/' + (ns ? enc(ns) + '/' : '') + enc(name);
	}
	function svcKey(ns, name) {
		return (ns ? ns + '/' : '') + name;
	}
	function metaKey(m) {
		if (m.target && m.target.kind === 'server')
			return 'server';
		return svcKey(m.namespace || '', m.service || '');
	}
	function metaRoute(m) {
		if (m.target && m.target.kind === 'server')
			return '#/server';
		if (m.target && m.target.kind === 'service')
			return svcRoute(m.namespace || '', m.service || '');
		return '#/profiles';
	}
	function metaWhere(m) {
		return (m.target && m.target.description) || m.service || '';
	}
	function targetLabel(t) {
		if (t === 'server')
			return 'this server';
		if (t && t.startsWith('service:'))
			return 'Service ' + t.slice(8);
		return t || '';
	}

	/* ---- routes ---- */

	function parseHash() {
		let h = location.hash.replace(/^#/, '');
		const qi = h.indexOf('?');
		const query = new URLSearchParams(qi >= 0 ? h.slice(qi + 1) : '');
		if (qi >= 0)
			h = h.slice(0, qi);
		const parts = h.split('/').filter(Boolean).map((p) => {
			try {
				return decodeURIComponent(p);
			} catch (e) {
				return p;
			}
		});
		const r = { query };
		if (!parts.length || (parts[0] === 'server' && parts.length === 1)) {
			r.kind = 'server';
		} else if (parts[0] === 'service' && (parts.length === 2 || parts.length === 3)) {
			r.kind = 'service';
			r.ns = parts.length === 3 ? parts[1] : '';
			r.name = parts[parts.length - 1];
		} else if (parts[0] === 'profiles' && parts.length === 1) {
			r.kind = 'profiles';
		} else if (parts[0] === 'profile' && parts.length === 2) {
			r.kind = 'profile';
			r.id = parts[1];
		} else if (parts[0] === 'compare' && parts.length === 3) {
			r.kind = 'compare';
			r.base = parts[1];
			r.new = parts[2];
		} else {
			r.kind = 'unknown';
		}
		return r;
	}

	function go(hash) {
		if (location.hash === hash)
			render();
		else
			location.hash = hash;
	}

	/* ---- the frame: header, navigation, sign-in ---- */

	function main() {
		return $('#main');
	}
	function pageError(msg) {
		const e = $('#page-error');
		e.textContent = msg || '';
		e.hidden = !msg;
	}
	function notice(content) {
		const n = clear($('#notice'));
		if (content)
			add(n, [content]);
		n.hidden = !content;
	}

	function renderHeader() {
		const nav = clear($('#nav'));
		const who = clear($('#who'));
		$('#top').classList.toggle('signed-out', !S.me);
		if (!S.me)
			return;
		const r = parseHash();
		const link = (href, text, active, testid) => el('a', {
			href, text, class: active ? 'active' : '', testid,
			'aria-current': active ? 'page' : null,
		});
		nav.appendChild(link('#/server', 'Server', r.kind === 'server', 'nav-server'));
		for (const s of S.services) {
			const ns = s.namespace || '';
			const active = r.kind === 'service' && r.name === s.name && r.ns === ns;
			const a = link(svcRoute(ns, s.name), '', active, 'nav-service');
			a.dataset.service = svcKey(ns, s.name);
			add(a, [ns ? el('span', { class: 'ns', text: ns + '/' }) : null, s.name]);
			nav.appendChild(a);
		}
		nav.appendChild(link('#/profiles', 'Profiles', r.kind === 'profiles', 'nav-profiles'));
		add(who, [
			el('span', { class: 'who-name', testid: 'who-name', text: S.me.name }),
			el('span', { class: 'role', testid: 'who-role', text: ROLES[S.me.role] || S.me.role }),
			el('button', { type: 'button', class: 'link', testid: 'sign-out', text: 'Sign out',
				on: { click: signOut } }),
		]);
	}

	async function loadServices() {
		try {
			const d = await api('GET', '/v1/processes');
			S.services = (d && d.services) || [];
			renderHeader();
			return d;
		} catch (e) {
			if (e.status !== 401)
				pageError(upper1(e.message));
			return null;
		}
	}

	function showSignIn(message) {
		S.gen++;
		S.view = null;
		stopPolling();
		renderHeader();
		notice(null);
		pageError('');
		const m = clear(main());
		const err = el('p', { id: 'signin-error', class: 'error', role: 'alert', testid: 'signin-error',
			hidden: !message, text: message || '' });
		const token = el('input', { id: 'token', type: 'password', name: 'token', required: true,
			autocomplete: 'current-password', spellcheck: 'false', testid: 'token' });
		const button = el('button', { type: 'submit', class: 'primary', testid: 'sign-in',
			text: 'Sign in' });
		const form = el('form', { id: 'signin-form', class: 'card signin', testid: 'signin-form' },
			el('h1', { text: 'Sign in' }),
			el('p', { text: 'Sign in with your API token to see what this server and its ' +
				'Services spend their time on.' }),
			el('label', { for: 'token', text: 'API token' }), token, err,
			el('div', { class: 'actions' }, button));
		form.addEventListener('submit', async (ev) => {
			ev.preventDefault();
			button.disabled = true;
			err.hidden = true;
			try {
				const d = await api('POST', '/v1/session', { token: token.value });
				token.value = '';
				signedIn(d);
			} catch (e) {
				err.textContent = e.status === 401 ? 'Sign-in refused: ' + e.message :
					upper1(e.message);
				err.hidden = false;
				button.disabled = false;
				token.select();
			}
		});
		m.appendChild(form);
		token.focus();
	}

	function signedIn(d) {
		S.me = { name: d.name, role: d.role };
		S.csrf = d.csrf || '';
		renderHeader();
		loadServices();
		if (S.afterSignIn && S.afterSignIn !== location.hash) {
			const h = S.afterSignIn;
			S.afterSignIn = '';
			location.hash = h;
		} else {
			render();
		}
	}

	function sessionEnded() {
		S.me = null;
		S.csrf = '';
		S.watch = null;
		S.afterSignIn = location.hash;
		showSignIn('Your session has ended. Sign in again.');
	}

	async function signOut() {
		try {
			await api('DELETE', '/v1/session');
		} catch (e) {
			if (e.status !== 401) {
				pageError('Could not sign out: ' + e.message);
				return;
			}
		}
		S.me = null;
		S.csrf = '';
		S.watch = null;
		S.services = [];
		showSignIn('');
		$('#signin-form p').textContent = 'You are signed out.';
	}

	/* A modal confirmation (a <dialog>): resolves true when the action is chosen. */
	function confirmDialog(title, text, okLabel) {
		return new Promise((resolve) => {
			const dlg = $('#confirm');
			$('#confirm-title').textContent = title;
			$('#confirm-text').textContent = text;
			$('#confirm-ok').textContent = okLabel;
			const done = (v) => {
				dlg.removeEventListener('close', onClose);
				resolve(v);
			};
			const onClose = () => done(dlg.returnValue === 'ok');
			dlg.returnValue = '';
			dlg.addEventListener('close', onClose);
			dlg.showModal();
			$('#confirm-cancel').focus();
		});
	}

	/* ---- the capture poller ---- */

	function stopPolling() {
		clearTimeout(S.pollTimer);
		S.pollTimer = 0;
	}
	function wantPolling() {
		return !!S.me && (!!S.watch || !!(S.view && S.view.onCapture));
	}
	function startPolling() {
		if (!S.pollTimer && wantPolling())
			S.pollTimer = setTimeout(pollTick, 0);
	}
	async function pollTick() {
		S.pollTimer = 0;
		if (!wantPolling())
			return;
		let cur;
		try {
			cur = await api('GET', '/v1/captures/current');
			if (cur && cur.state === 'none') /* none ran since the agent started */
				cur = null;
		} catch (e) {
			if (e.status === 401)
				return;
			cur = undefined;
		}
		if (cur !== undefined)
			onCurrent(cur);
		/* Every second while a capture runs; every 3 s otherwise, to notice one started
		 * elsewhere (another tab, an annotation, the command line). */
		const running = S.watch || (cur && cur.state === 'running');
		if (!S.pollTimer && wantPolling())
			S.pollTimer = setTimeout(pollTick, running ? 1000 : 3000);
	}

	function onCurrent(cur) {
		const w = S.watch;
		if (w && cur && cur.id === w.id && cur.state !== 'running') {
			S.watch = null;
			if (cur.state === 'done' && cur.profile_id) {
				const r = parseHash();
				const hash = '#/profile/' + enc(cur.profile_id);
				if (r.kind === 'profile' || r.kind === 'compare') {
					notice(el('span', {}, 'The capture of ' + targetLabel(cur.target) +
						' has finished. ', el('a', { href: hash, text: 'Open its profile',
						on: { click: () => notice(null) } })));
				} else {
					go(hash);
					return;
				}
			} else {
				S.lastEnd = { id: cur.id, target: cur.target, message: cur.message ||
					'the capture ' + cur.state };
			}
		}
		if (S.view && S.view.onCapture)
			S.view.onCapture(cur);
	}

	/* ---- the Performance tab ---- */

	function renderPerformance(r) {
		const server = r.kind === 'server';
		const target = server ? 'server' : svcTarget(r.ns, r.name);
		const title = server ? 'This server' : 'Service ' + r.name;
		const gen = S.gen;
		const m = main();
		const ready = el('div', { id: 'ready-banner', class: 'banner pending', testid: 'ready-banner',
			role: 'status' }, 'Checking what can be profiled…');
		const facts = el('div', { id: 'facts', class: 'facts' });
		const captureArea = el('div', { id: 'capture-area' });
		const busiest = server ? el('section', { id: 'busiest', class: 'card', testid: 'busiest' },
			el('h2', { text: 'Busiest processes right now' }),
			el('p', { class: 'muted', text: 'Loading…' })) : null;
		const past = el('section', { id: 'past-profiles', class: 'card', testid: 'past-profiles' });

		add(m, [
			el('div', { class: 'heading' },
				el('h1', { testid: 'page-title' }, title,
					!server && r.ns ? el('span', { class: 'ns-title', text: ' in ' + r.ns }) : null),
				el('div', { class: 'tabs', role: 'tablist' },
					el('span', { class: 'tab active', role: 'tab', 'aria-selected': 'true',
						text: 'Performance' }))),
			ready, facts, busiest, captureArea, past,
		]);

		const view = {
			kind: 'performance', target, server, r, gen, captureArea, status: null,
			current: undefined, form: null, card: null,
		};
		S.view = view;
		view.onCapture = (cur) => perfOnCapture(view, cur);

		const why = r.query.get('why');
		const wantQ = r.query.get('question');
		const wantD = parseInt(r.query.get('duration') || '', 10);

		api('GET', '/v1/status' + (server ? '' : '?target=' + enc(target))).then((st) => {
			if (gen !== S.gen)
				return;
			view.status = st;
			renderStatus(ready, facts, st);
			view.form = buildForm(view, st, wantQ, DURATIONS.includes(wantD) ? wantD : 30, why);
			perfShow(view);
			startPolling();
		}).catch((e) => {
			if (gen !== S.gen)
				return;
			ready.className = 'banner bad';
			clear(ready).appendChild(el('strong', { text: upper1(e.message) }));
		});

		if (server)
			renderBusiest(busiest, gen);
		renderPastProfiles(past, { service: server ? 'server' : svcKey(r.ns, r.name),
			perService: true, gen });
		if (server && S.me.role === 'admin')
			m.appendChild(removeSection());
		const langs = el('details', { id: 'languages', class: 'card languages', testid: 'languages' },
			el('summary', { text: 'Which languages can be profiled?' }));
		view.langs = langs;
		m.appendChild(langs);
		m.appendChild(symbolsPanel());
	}

	function renderStatus(ready, facts, st) {
		clear(ready);
		ready.className = 'banner ' + (st.ready ? 'ok' : 'bad');
		ready.appendChild(el('strong', { class: 'ready-message', text: st.message ||
			(st.ready ? 'Ready to profile' : 'Cannot profile right now') }));
		if (!st.ready && st.reasons && st.reasons.length)
			ready.appendChild(el('ul', { class: 'reasons' },
				st.reasons.map((x) => el('li', { text: x }))));
		clear(facts);
		const runtimes = el('ul', { id: 'runtimes', class: 'runtimes', testid: 'runtimes' },
			(st.runtimes || []).map((x) => el('li', { text: x.text || x.display })));
		if (!(st.runtimes || []).length)
			runtimes.appendChild(el('li', { class: 'muted', text: 'No process found.' }));
		add(facts, [el('dl', {},
			el('dt', { text: 'Target' }), el('dd', { text: (st.target && st.target.description) ||
				st.target_description || '' }),
			el('dt', { text: 'Runtimes' }), el('dd', {}, runtimes),
			el('dt', { text: 'Kernel' }), el('dd', { testid: 'kernel', text: st.kernel || '' }),
			el('dt', { text: 'Processor' }), el('dd', { testid: 'processor', text: st.processor || '' }))]);
		const langs = $('#languages');
		if (langs && (st.languages || []).length) {
			langs.appendChild(el('table', { class: 'grid' },
				el('thead', {}, el('tr', {}, ['Language', 'Versions', 'How'].map((t) =>
					el('th', { text: t })))),
				el('tbody', {}, st.languages.map((l) => el('tr', {},
					el('td', { text: l.language }), el('td', { text: l.versions }),
					el('td', { text: l.how }))))));
			langs.appendChild(el('p', { class: 'muted', text: 'Every version here is proven by ' +
				'a test that profiles a real application in that language and checks the ' +
				'right function is named.' }));
		}
	}

	async function renderBusiest(sec, gen) {
		const d = await loadServices();
		if (gen !== S.gen)
			return;
		const body = (d && d.busiest) || [];
		clear(sec).appendChild(el('h2', { text: 'Busiest processes right now' }));
		if (!d) {
			sec.appendChild(el('p', { class: 'muted', text: 'The process list could not be read.' }));
			return;
		}
		if (!body.length) {
			sec.appendChild(el('p', { class: 'muted', text: 'No process is using the CPU.' }));
			return;
		}
		add(sec, [
			el('table', { class: 'grid', id: 'busiest-table' },
				el('thead', {}, el('tr', {}, ['Process', 'PID', 'CPU', 'Belongs to'].map((t) =>
					el('th', { text: t })))),
				el('tbody', {}, body.map((p) => el('tr', { testid: 'busy-row' },
					el('td', { class: 'mono', text: p.comm }), el('td', { class: 'num', text: p.pid }),
					el('td', { class: 'num', text: fmtPercent(p.cpu_percent) + ' CPU' }),
					el('td', { text: p.owner || '' }))))),
			el('p', { class: 'muted small', text: 'These figures are averages since each process ' +
				'started, as ps reports them; a profile shows what they do now.' }),
		]);
	}

	function buildForm(view, st, wantQ, wantD, why) {
		const questions = (st.questions && st.questions.length ? st.questions :
			QUESTIONS.map(([id, text]) => ({ id, text, available: true })));
		let chosen = questions.find((q) => q.id === wantQ && q.available) ||
			questions.find((q) => q.available);
		const f = { question: chosen ? chosen.id : '', duration: wantD, planSeq: 0 };
		const refusal = el('p', { id: 'refusal', class: 'refusal', role: 'alert', testid: 'refusal',
			hidden: true });
		const qset = el('fieldset', { class: 'questions', testid: 'questions' },
			el('legend', { text: 'What do you want to know?' }));
		for (const q of questions) {
			const input = el('input', { type: 'radio', name: 'question', value: q.id,
				testid: 'question-' + q.id, disabled: !q.available,
				checked: chosen && q.id === chosen.id });
			input.addEventListener('change', () => {
				f.question = q.id;
				update();
			});
			qset.appendChild(el('label', { class: 'choice' + (q.available ? '' : ' unavailable') },
				input, el('span', { class: 'choice-text', text: q.text || qtext(q.id) }),
				!q.available && q.reason ? el('span', { class: 'reason', text: q.reason }) : null,
				q.available && q.note ? el('span', { class: 'reason note', text: q.note }) : null));
		}
		const dset = el('fieldset', { class: 'durations', testid: 'durations' },
			el('legend', { text: 'For how long?' }));
		const drow = el('div', { class: 'duration-row' });
		for (const s of DURATIONS) {
			const input = el('input', { type: 'radio', name: 'duration', value: s,
				testid: 'duration-' + s, checked: s === wantD });
			input.addEventListener('change', () => {
				f.duration = s;
				update();
			});
			drow.appendChild(el('label', { class: 'choice inline' }, input,
				el('span', { text: s + ' seconds' })));
		}
		const threadsNote = el('p', { class: 'muted', testid: 'threads-note', hidden: true,
			text: 'The threads snapshot always takes 5 seconds.' });
		add(dset, [drow, threadsNote, el('p', { class: 'muted small', text: 'Capture while the ' +
			(view.server ? 'server' : 'Service') + ' is doing the thing you want to understand: ' +
			'under load, or during the slow request.' })]);
		const steps = el('ol', { id: 'plan-steps', class: 'steps', testid: 'plan-steps' });
		const plan = el('section', { class: 'plan', id: 'plan' },
			el('h3', { text: 'What SlideOps will do' }), steps);
		const button = el('button', { type: 'submit', id: 'capture-button', class: 'primary',
			testid: 'capture-button' });
		const busy = el('p', { class: 'busy', testid: 'busy-notice', hidden: true });
		const actions = el('div', { class: 'actions' });
		if (canCapture())
			actions.appendChild(button);
		else
			actions.appendChild(el('p', { class: 'muted', testid: 'viewer-note', text:
				'You are signed in as a Viewer: you can read profiles; capturing needs a ' +
				'role above Viewer.' }));
		const form = el('form', { id: 'capture-form', class: 'card capture-form',
			testid: 'capture-form', 'aria-label': 'Capture a profile' },
			why ? el('p', { id: 'why-note', class: 'why', testid: 'why-note',
				text: 'You came here because: ' + why }) : null,
			qset, dset, plan, busy, refusal, actions);

		function update() {
			const threads = f.question === 'threads';
			for (const i of dset.querySelectorAll('input'))
				i.disabled = threads;
			drow.classList.toggle('dimmed', threads);
			threadsNote.hidden = !threads;
			button.textContent = threads ? 'Take a 5 second snapshot' :
				'Capture for ' + f.duration + ' seconds';
			button.disabled = !f.question || !st.ready || f.sending;
			loadPlan();
		}
		async function loadPlan() {
			const seq = ++f.planSeq;
			if (!f.question) {
				clear(steps).appendChild(el('li', { class: 'muted', text:
					'No question can be answered for this target.' }));
				return;
			}
			try {
				const p = await api('GET', '/v1/plan?target=' + enc(view.target) + '&question=' +
					enc(f.question) + '&duration=' + (f.question === 'threads' ? 30 : f.duration));
				if (seq !== f.planSeq || view.gen !== S.gen)
					return;
				clear(steps);
				for (const s of (p && p.steps) || [])
					steps.appendChild(el('li', { text: s.text }));
			} catch (e) {
				if (seq !== f.planSeq || view.gen !== S.gen)
					return;
				clear(steps).appendChild(el('li', { class: 'error', text: upper1(e.message) }));
			}
		}
		form.addEventListener('submit', async (ev) => {
			ev.preventDefault();
			if (!canCapture() || !f.question || f.sending)
				return;
			f.sending = true;
			button.disabled = true;
			refusal.hidden = true;
			try {
				const c = await api('POST', '/v1/captures', { target: view.target,
					question: f.question, duration: f.duration });
				S.watch = { id: c.id, target: view.target };
				S.lastEnd = null;
				perfOnCapture(view, Object.assign({ step: 0, steps: 0, elapsed_seconds: 0 }, c,
					{ target: view.target }));
				startPolling();
			} catch (e) {
				showRefusal(e.message);
			} finally {
				f.sending = false;
				update();
			}
		});
		function showRefusal(msg) {
			refusal.textContent = msg;
			refusal.hidden = !msg;
		}
		f.el = form;
		f.update = update;
		f.busy = busy;
		f.showRefusal = showRefusal;
		update();
		return f;
	}

	function perfShow(view) {
		const cur = view.current;
		const mine = cur && cur.state === 'running' && cur.target === view.target;
		const area = view.captureArea;
		if (mine) {
			if (!view.card || !area.contains(view.card.el)) {
				view.card = buildCard(view);
				clear(area).appendChild(view.card.el);
			}
			view.card.update(cur);
			return;
		}
		view.card = null;
		if (!view.form)
			return;
		if (!area.contains(view.form.el))
			clear(area).appendChild(view.form.el);
		const other = cur && cur.state === 'running';
		view.form.busy.hidden = !other;
		if (other)
			view.form.busy.textContent = 'A capture of ' + targetLabel(cur.target) + ' is running ' +
				'on this server now' + (cur.steps ? ' (step ' + cur.step + ' of ' + cur.steps + ')' : '') +
				'. Only one capture runs on a server at a time.';
		if (S.lastEnd && S.lastEnd.target === view.target) {
			view.form.showRefusal('The capture did not finish: ' + S.lastEnd.message);
			S.lastEnd = null;
		}
	}

	function perfOnCapture(view, cur) {
		if (view.gen !== S.gen)
			return;
		const before = view.current;
		view.current = cur;
		/* A capture of this target that this tab did not start (another tab, an annotation):
		 * follow it too, so its profile opens when it is done. */
		if (cur && cur.state === 'running' && cur.target === view.target &&
		    (!S.watch || S.watch.id !== cur.id))
			S.watch = { id: cur.id, target: cur.target };
		if (before && before.state === 'running' && cur && cur.id === before.id &&
		    cur.state !== 'running' && cur.target === view.target)
			renderPastProfiles($('#past-profiles'), { service: view.server ? 'server' :
				svcKey(view.r.ns, view.r.name), perService: true, gen: view.gen });
		if (view.status)
			perfShow(view);
	}

	function buildCard(view) {
		const title = el('h2', { testid: 'progress-title' });
		const where = el('p', { class: 'muted' });
		const step = el('p', { class: 'step', testid: 'progress-step' });
		const elapsed = el('p', { class: 'elapsed', testid: 'progress-elapsed' });
		const bar = el('progress', { max: 1, value: 0 });
		const card = el('section', { id: 'progress-card', class: 'card progress-card',
			testid: 'progress-card', 'aria-live': 'polite' },
		title, where, step, bar, elapsed,
		el('p', { class: 'muted small', text: 'You can leave this page: the capture keeps ' +
			'running, and its flame graph opens by itself when it finishes.' }));
		return {
			el: card,
			update(cur) {
				title.textContent = 'Capturing: ' + qtext(cur.question);
				const secs = cur.question === 'threads' ? 5 : cur.duration_seconds;
				where.textContent = targetLabel(cur.target) + (secs ? ', ' + fmtLength(secs) : '');
				step.textContent = cur.steps ? 'Step ' + cur.step + ' of ' + cur.steps + ': ' +
					(cur.text || '') : 'Starting…';
				const e = Math.max(0, Math.floor(cur.elapsed_seconds || 0));
				elapsed.textContent = 'It has run for ' + (e === 1 ? '1 second' : e + ' seconds') + '.';
				if (cur.steps) {
					bar.max = cur.steps;
					bar.value = Math.max(0, cur.step - 1);
				}
			},
		};
	}

	function removeSection() {
		const result = el('p', { class: 'error', role: 'alert', hidden: true, testid: 'remove-error' });
		const button = el('button', { type: 'button', class: 'danger', testid: 'remove-profiler',
			text: 'Remove the profiler from this server' });
		button.addEventListener('click', async () => {
			const ok = await confirmDialog('Remove the profiler from this server?',
				'This deletes the profiler, every profile stored on this server and any capture ' +
				'files left behind, and the agent stops. The next capture installs it again.',
				'Remove the profiler');
			if (!ok)
				return;
			button.disabled = true;
			try {
				await api('POST', '/v1/remove');
				S.gen++;
				S.view = null;
				S.watch = null;
				stopPolling();
				clear(main()).appendChild(el('section', { class: 'card', testid: 'removed' },
					el('h1', { text: 'The profiler was removed from this server' }),
					el('p', { text: 'Its files and the stored profiles are deleted, and the agent ' +
						'has stopped. The next capture installs it again.' })));
			} catch (e) {
				result.textContent = upper1(e.message);
				result.hidden = false;
				button.disabled = false;
			}
		});
		return el('section', { id: 'remove', class: 'card remove' },
			el('h2', { text: 'Removing the profiler' }),
			el('p', { text: 'The profiler stays installed on this server so the next capture ' +
				'starts quickly.' }), button, result);
	}

	/* ---- debug symbols ---- */

	/* A button that uploads the file chosen; @done(result) after a success. */
	function uploadControl(label, testid, done) {
		const input = el('input', { type: 'file', hidden: true, testid: testid + '-file' });
		const msg = el('p', { class: 'upload-result', role: 'status', hidden: true,
			testid: testid + '-result' });
		const button = el('button', { type: 'button', testid, text: label,
			on: { click: () => input.click() } });
		input.addEventListener('change', async () => {
			const file = input.files && input.files[0];
			if (!file)
				return;
			button.disabled = true;
			msg.hidden = false;
			msg.className = 'upload-result';
			msg.textContent = 'Uploading ' + file.name + '…';
			try {
				const r = await uploadSymbols(file);
				const u = r.upload || {};
				msg.textContent = u.file_name + ' named ' + u.functions + ' functions of build ' +
					String(u.build_id).slice(0, 12) + (r.replaced ? ', replacing the earlier ' +
					'upload.' : '.');
				if (done)
					done(r);
			} catch (e) {
				msg.className = 'upload-result error';
				msg.textContent = 'The upload was refused: ' + e.message;
			}
			button.disabled = false;
			input.value = '';
		});
		return el('span', { class: 'upload' }, button, input, msg);
	}

	/* The Debug symbols panel at the bottom of every Performance tab. */
	function symbolsPanel() {
		const list = el('div', { testid: 'symbols-list' }, el('p', { class: 'muted', text: 'Loading…' }));
		const gen = S.gen;
		const load = async () => {
			let d;
			try {
				d = await api('GET', '/v1/symbols');
			} catch (e) {
				if (gen === S.gen)
					clear(list).appendChild(el('p', { class: 'error', text: upper1(e.message) }));
				return;
			}
			if (gen !== S.gen)
				return;
			const ups = d.uploads || [];
			clear(list).appendChild(ups.length ? el('table', { class: 'symbols' },
				el('thead', {}, el('tr', {}, ['File', 'Functions named', 'Build', 'Uploaded', '']
					.map((h) => el('th', { text: h })))),
				el('tbody', {}, ups.map((u) => el('tr', { testid: 'symbols-row' },
					el('td', { class: 'mono', text: u.file_name }),
					el('td', { text: String(u.functions) }),
					el('td', { class: 'mono', title: u.build_id,
						text: String(u.build_id).slice(0, 12) }),
					el('td', { text: fmtTime(new Date(u.uploaded_at * 1000).toISOString()) +
						(u.uploaded_by ? ' by ' + u.uploaded_by : '') }),
					el('td', {}, canCapture() ? el('button', { type: 'button', class: 'danger',
						testid: 'symbols-delete', text: 'Delete', on: { click: async () => {
							if (!await confirmDialog('Delete these debug symbols?', u.file_name +
								' names build ' + u.build_id + '. Its functions show as ' +
								'addresses again.', 'Delete'))
								return;
							try {
								await api('DELETE', '/v1/symbols/' + enc(u.build_id));
							} catch (e) {
								list.appendChild(el('p', { class: 'error', text: upper1(e.message) }));
							}
							load();
						} } }) : null))))) :
				el('p', { class: 'muted', text: 'No debug symbols uploaded yet.' }));
		};
		load();
		return el('section', { id: 'debug-symbols', class: 'card symbols-panel', testid: 'debug-symbols' },
			el('h2', { text: 'Debug symbols' }),
			el('p', { class: 'muted', text: 'A stripped build shows addresses instead of function ' +
				'names. Upload its unstripped build, or the debug file made from it before ' +
				'stripping (objcopy --only-keep-debug app app.debug), and its functions are named ' +
				'in every profile of that build, including earlier ones. Files up to 1 GB; only ' +
				'function names and addresses are kept.' }),
			list, canCapture() ? uploadControl('Upload debug symbols', 'symbols-upload', load) : null);
	}

	/* The card of a profile whose stripped binaries hold 1% or more of it. */
	function strippedCard(sum, reload) {
		const stripped = (sum && sum.stripped_binaries) || [];
		if (!stripped.length)
			return null;
		const why = (b) => b.build_id ? el('span', { class: 'muted', text: ', build ' +
			String(b.build_id).slice(0, 12) }) : el('span', { class: 'muted', testid: 'no-build-id',
			text: sum.build_ids ? ': the binary has no build id, so SlideOps cannot tell ' +
				'which build an upload names. Rebuild it with one (Go: -ldflags=-B=gobuildid).' :
				': this profile was captured before SlideOps kept build ids. Capture again, ' +
				'then upload.' });
		return el('section', { class: 'card stripped', testid: 'stripped-card' },
			el('h2', { text: 'Some functions have no names, because their binaries were stripped' }),
			el('ul', {}, stripped.map((b) => el('li', {},
				el('span', { class: 'mono', text: b.path }), ' ',
				el('span', { text: fmtPercent(b.share) + ' of this profile' }), why(b)))),
			canCapture() ? uploadControl('Upload debug symbols', 'card-upload', reload) : null);
	}

	/* ---- lists of profiles ---- */

	/* opts: {service, question, offset, perService, gen, onPage} */
	async function renderPastProfiles(sec, opts) {
		if (!sec)
			return;
		const gen = opts.gen;
		const q = new URLSearchParams();
		if (opts.service)
			q.set('service', opts.service);
		if (opts.question)
			q.set('question', opts.question);
		q.set('offset', opts.offset || 0);
		q.set('limit', LIST_LIMIT);
		let d;
		try {
			d = await api('GET', '/v1/profiles?' + q);
		} catch (e) {
			if (gen !== S.gen)
				return;
			clear(sec).appendChild(el('p', { class: 'error', role: 'alert', text: upper1(e.message) }));
			return;
		}
		if (gen !== S.gen)
			return;
		clear(sec);
		const list = (d && d.profiles) || [];
		if (opts.perService)
			sec.appendChild(el('h2', { text: 'Past profiles' }));
		const ticked = new Map();
		const compareBtn = el('button', { type: 'button', testid: 'compare-ticked', disabled: true,
			text: 'Compare the two ticked' });
		const hint = el('span', { class: 'muted small', testid: 'compare-hint',
			text: 'Tick two profiles of the same type to compare them.' });
		const delErr = el('p', { class: 'error', role: 'alert', hidden: true, testid: 'list-error' });
		function tickChanged() {
			const t = [...ticked.values()];
			const same = t.length === 2 && t[0].question === t[1].question;
			compareBtn.disabled = !same;
			hint.textContent = t.length === 2 && !same ?
				'These two answer different questions: tick two of the same type.' :
				t.length > 2 ? 'Tick exactly two.' :
					'Tick two profiles of the same type to compare them.';
		}
		compareBtn.addEventListener('click', () => {
			const t = [...ticked.values()].sort((a, b) => (a.created_ns || 0) - (b.created_ns || 0) ||
				String(a.created).localeCompare(String(b.created)));
			if (t.length === 2)
				go('#/compare/' + enc(t[0].id) + '/' + enc(t[1].id));
		});
		if (!list.length) {
			sec.appendChild(el('p', { class: 'muted', testid: 'no-profiles', text: opts.perService ?
				'No profiles yet. Finished captures appear here, newest first.' :
				'No profile matches.' }));
		} else {
			sec.appendChild(el('div', { class: 'toolbar' }, compareBtn, hint));
			const cols = ['', 'Taken'];
			if (!opts.perService)
				cols.push('Of');
			cols.push('Type', 'Answer', 'Length', 'Languages', '');
			const tbody = el('tbody');
			list.forEach((p, i) => {
				const prev = list.slice(i + 1).find((o) => o.question === p.question &&
					metaKey(o) === metaKey(p));
				const tick = el('input', { type: 'checkbox', testid: 'tick',
					'aria-label': 'Tick to compare' });
				tick.addEventListener('change', () => {
					if (tick.checked)
						ticked.set(p.id, p);
					else
						ticked.delete(p.id);
					tickChanged();
				});
				const acts = el('td', { class: 'row-actions' },
					el('a', { href: '#/profile/' + enc(p.id), testid: 'open-profile', text: 'Open' }),
					prev ? el('a', { href: '#/compare/' + enc(prev.id) + '/' + enc(p.id),
						testid: 'compare-previous', text: 'Compare with the one before' }) : null);
				if (canCapture()) {
					acts.appendChild(el('button', { type: 'button', class: 'link danger',
						testid: 'delete-profile', text: 'Delete', on: { click: async () => {
							if (!await confirmDialog('Delete this profile?', qtext(p.question) +
								', ' + metaWhere(p) + ', taken ' + fmtTime(p.created) + '.', 'Delete'))
								return;
							try {
								await api('DELETE', '/v1/profiles/' + enc(p.id));
								renderPastProfiles(sec, opts);
							} catch (e) {
								delErr.textContent = upper1(e.message);
								delErr.hidden = false;
							}
						} } }));
				}
				const row = el('tr', { testid: 'profile-row', 'data-id': p.id,
					'data-question': p.question },
				el('td', {}, tick), el('td', { class: 'nowrap', text: fmtTime(p.created) }),
				opts.perService ? null : el('td', {}, el('a', { href: metaRoute(p),
					text: metaWhere(p) + (p.namespace ? ' (' + p.namespace + ')' : '') })),
				el('td', { class: 'nowrap', text: qtext(p.question) }),
				el('td', { class: 'answer-cell', text: p.answer || '' }),
				el('td', { class: 'nowrap', text: fmtLength(p.duration_seconds) }),
				el('td', { text: fmtLangs(p.languages) }), acts);
				tbody.appendChild(row);
			});
			sec.appendChild(el('table', { class: 'grid profiles', id: 'past-profiles-table',
				testid: 'past-profiles-table' },
			el('thead', {}, el('tr', {}, cols.map((c) => el('th', { text: c })))), tbody));
		}
		sec.appendChild(delErr);
		const total = (d && d.total) || 0;
		const offset = (d && d.offset) || 0;
		if (total > list.length) {
			const pager = el('div', { class: 'pager' }, el('span', { class: 'muted',
				text: (offset + 1) + '–' + (offset + list.length) + ' of ' + total }));
			if (opts.onPage) {
				if (offset > 0)
					pager.appendChild(el('button', { type: 'button', text: 'Newer', testid: 'newer',
						on: { click: () => opts.onPage(Math.max(0, offset - LIST_LIMIT)) } }));
				if (offset + list.length < total)
					pager.appendChild(el('button', { type: 'button', text: 'Older', testid: 'older',
						on: { click: () => opts.onPage(offset + LIST_LIMIT) } }));
			} else {
				pager.appendChild(el('a', { href: '#/profiles?service=' + enc(opts.service || ''),
					text: 'See them all on the Profiles page' }));
			}
			sec.appendChild(pager);
		}
		if (opts.perService)
			sec.appendChild(el('p', { class: 'muted small', text: 'The latest 50 are kept per ' +
				(opts.service === 'server' ? 'server' : 'Service') +
				'; older ones are removed as new ones arrive.' }));
	}

	function renderProfiles(r) {
		const gen = S.gen;
		const svc = r.query.get('service') || '';
		const question = r.query.get('question') || '';
		const offset = Math.max(0, parseInt(r.query.get('offset') || '0', 10) || 0);
		const m = main();
		const sSel = el('select', { id: 'filter-service', testid: 'filter-service' },
			el('option', { value: '', text: 'All Services and this server' }),
			el('option', { value: 'server', text: 'This server' }));
		const keys = new Set(['', 'server']);
		for (const s of S.services) {
			const k = svcKey(s.namespace || '', s.name);
			if (!keys.has(k)) {
				keys.add(k);
				sSel.appendChild(el('option', { value: k, text: 'Service ' + k }));
			}
		}
		if (!keys.has(svc))
			sSel.appendChild(el('option', { value: svc, text: 'Service ' + svc }));
		sSel.value = svc;
		const qSel = el('select', { id: 'filter-question', testid: 'filter-question' },
			el('option', { value: '', text: 'All types' }),
			QUESTIONS.map(([id, text]) => el('option', { value: id, text })));
		qSel.value = QTEXT[question] ? question : '';
		const nav = (o) => {
			const q = new URLSearchParams();
			if (sSel.value)
				q.set('service', sSel.value);
			if (qSel.value)
				q.set('question', qSel.value);
			if (o)
				q.set('offset', o);
			const s = q.toString();
			go('#/profiles' + (s ? '?' + s : ''));
		};
		sSel.addEventListener('change', () => nav(0));
		qSel.addEventListener('change', () => nav(0));
		const sec = el('section', { id: 'profiles-list', class: 'card', testid: 'profiles-list' },
			el('p', { class: 'muted', text: 'Loading…' }));
		add(m, [
			el('div', { class: 'heading' }, el('h1', { testid: 'page-title', text: 'Profiles' })),
			el('p', { class: 'muted', text: 'Every finished capture of this server and its ' +
				'Services, newest first. Profiles taken by continuous profiling are not listed.' }),
			el('div', { class: 'filters' },
				el('label', {}, 'Service ', sSel), el('label', {}, 'Type ', qSel)),
			sec,
		]);
		S.view = { kind: 'profiles', gen };
		renderPastProfiles(sec, { service: svc, question: QTEXT[question] ? question : '', offset,
			gen, onPage: nav });
	}

	/* ---- one profile ---- */

	async function renderProfile(r) {
		const gen = S.gen;
		const m = main();
		S.view = { kind: 'profile', gen };
		m.appendChild(el('p', { class: 'muted', text: 'Loading the profile…' }));
		let d;
		try {
			d = await api('GET', '/v1/profiles/' + enc(r.id));
		} catch (e) {
			if (gen !== S.gen)
				return;
			clear(m).appendChild(el('p', { class: 'error', role: 'alert', testid: 'profile-error',
				text: upper1(e.message) }));
			return;
		}
		if (gen !== S.gen)
			return;
		const p = d.profile || {};
		const sum = d.summary || null;
		clear(m);
		const id = enc(p.id || r.id);
		const secs = p.duration_seconds || (sum && sum.duration_seconds) || 0;
		const prevSlot = el('span');
		/* continuous profiling keeps the hour before a cpu capture: always a comparison */
		const hourBefore = d.continuous_before > 0 ? el('a', { class: 'button',
			testid: 'compare-continuous', href: '#/compare/continuous/' + id,
			text: 'Compare with the hour before' }) : null;
		const actions = el('div', { class: 'profile-actions' },
			el('span', { class: 'label', text: 'Download' }),
			el('a', { href: '/v1/profiles/' + id + '/download?format=pprof', download: '',
				testid: 'download-pprof', class: 'button', text: 'pprof file' }),
			el('a', { href: '/v1/profiles/' + id + '/download?format=collapsed', download: '',
				testid: 'download-collapsed', class: 'button', text: 'Collapsed stacks' }),
			prevSlot, hourBefore);
		const err = el('p', { class: 'error', role: 'alert', hidden: true, testid: 'profile-action-error' });
		if (canCapture()) {
			actions.appendChild(el('button', { type: 'button', class: 'danger', testid: 'delete-profile',
				text: 'Delete', on: { click: async () => {
					if (!await confirmDialog('Delete this profile?', qtext(p.question) + ', ' +
						metaWhere(p) + ', taken ' + fmtTime(p.created) + '.', 'Delete'))
						return;
					try {
						await api('DELETE', '/v1/profiles/' + id);
						go(metaRoute(p));
					} catch (e) {
						err.textContent = upper1(e.message);
						err.hidden = false;
					}
				} } }));
		}
		add(m, [
			el('p', { class: 'crumbs' }, el('a', { href: metaRoute(p), testid: 'back',
				text: '← ' + (metaRoute(p) === '#/profiles' ? 'Profiles' : 'Performance of ' +
				metaWhere(p)) })),
			el('h1', { id: 'profile-title', testid: 'profile-title',
				text: qtext(p.question) + ': ' + metaWhere(p) + ', ' + fmtLength(secs) }),
			el('p', { class: 'muted', testid: 'profile-meta', text: 'Taken ' + fmtTime(p.start ||
				p.created) + (p.namespace ? ' · namespace ' + p.namespace : '') + ' · ' +
				(p.sample_count || 0) + ' samples' + ((p.languages || []).length ? ' · ' +
				fmtLangs(p.languages) : '') }),
			el('p', { id: 'answer', class: 'answer', testid: 'answer', text: p.answer ||
				(sum && sum.answer) || '' }),
			strippedCard(sum, () => render()),
		]);
		const notes = (sum && sum.notes) || [];
		if (notes.length)
			m.appendChild(el('ul', { id: 'profile-notes', class: 'notes', testid: 'profile-notes' },
				notes.map((n) => el('li', { text: n }))));
		add(m, [actions, err]);
		if (sum && Array.isArray(sum.goroutines) && sum.goroutines.length)
			m.appendChild(goroutinesTable(sum.goroutines));
		else if (sum && Array.isArray(sum.threads) && sum.threads.length)
			m.appendChild(threadsTable(sum.threads));
		m.appendChild(flameFrame('/v1/profiles/' + id + '/flamegraph', 'profile-frame',
			'Flame graph of this profile'));
		/* The one before: the previous profile of the same type of this Service. */
		try {
			const l = await api('GET', '/v1/profiles?service=' + enc(metaKey(p)) + '&question=' +
				enc(p.question) + '&limit=500');
			if (gen !== S.gen)
				return;
			const list = ((l && l.profiles) || []).filter((o) => o.question === p.question);
			const i = list.findIndex((o) => o.id === p.id);
			if (i >= 0 && list[i + 1])
				prevSlot.appendChild(el('a', { class: 'button', testid: 'compare-previous',
					href: '#/compare/' + enc(list[i + 1].id) + '/' + id,
					text: 'Compare with the one before' }));
		} catch (e) {
			/* no link: the list is not essential to reading the profile */
		}
	}

	function threadsTable(threads) {
		const rows = threads.slice().sort((a, b) => (b.running || 0) - (a.running || 0));
		const java = rows.some((t) => t.java);
		const cols = ['Thread', 'Process', 'PID', 'TID', 'Running', 'Runnable', 'Waiting',
			'Commonest wait', 'Function'];
		if (java)
			cols.push('Java state');
		return el('details', { class: 'card threads', open: true, testid: 'threads-table' },
			el('summary', { text: 'Threads (' + rows.length + ')' }),
			el('div', { class: 'scroll' }, el('table', { class: 'grid' },
				el('thead', {}, el('tr', {}, cols.map((c) => el('th', { text: c })))),
				el('tbody', {}, rows.map((t) => el('tr', {},
					el('td', { class: 'mono', text: t.name }), el('td', { text: t.process }),
					el('td', { class: 'num', text: t.pid }), el('td', { class: 'num', text: t.tid }),
					el('td', { class: 'num', text: fmtPercent(t.running) }),
					el('td', { class: 'num', text: fmtPercent(t.runnable) }),
					el('td', { class: 'num', text: fmtPercent(t.waiting) }),
					el('td', { text: ((t.waits || [])[0] || {}).reason || '' }),
					el('td', { class: 'mono', text: t.function || '' }),
					java ? el('td', { text: t.java ? [t.java.state, t.java.lock, t.java.frame]
						.filter(Boolean).join(' · ') : '' }) : null))))));
	}

	function goroutinesTable(groups) {
		const cols = ['Goroutines', 'State', 'Function', 'Process', 'PID'];
		const total = groups.reduce((n, g) => n + (g.count || 0), 0);
		return el('details', { class: 'card threads', open: true, testid: 'goroutines-table' },
			el('summary', { text: 'Goroutines (' + total + ')' }),
			el('div', { class: 'scroll' }, el('table', { class: 'grid' },
				el('thead', {}, el('tr', {}, cols.map((c) => el('th', { text: c })))),
				el('tbody', {}, groups.map((g) => el('tr', {},
					el('td', { class: 'num', text: g.count }), el('td', { text: g.state }),
					el('td', { class: 'mono', text: g.function }),
					el('td', { text: g.process }),
					el('td', { class: 'num', text: g.pid })))))));
	}

	/* The agent's flame graph page in a same-origin frame, as tall as what it draws. */
	function flameFrame(src, testid, title) {
		const f = el('iframe', { src, class: 'fg-frame', testid, title,
			sandbox: 'allow-scripts allow-same-origin allow-downloads' });
		const fit = () => {
			try {
				const doc = f.contentDocument;
				if (!doc || !doc.documentElement)
					return;
				/* the document's own height, not the frame's (scrollHeight is never less) */
				const h = Math.ceil(doc.documentElement.getBoundingClientRect().height);
				if (h > 0)
					f.style.height = Math.max(480, h + 24) + 'px';
			} catch (e) {
				/* not readable: keep the height of the stylesheet */
			}
		};
		f.addEventListener('load', () => {
			fit();
			setTimeout(fit, 400);
			try {
				const doc = f.contentDocument;
				if (doc && /json/.test(doc.contentType)) {
					let msg = doc.body ? doc.body.textContent : '';
					try {
						msg = JSON.parse(msg).error || msg;
					} catch (e) {
						/* not JSON after all: show it as it is */
					}
					const p = el('p', { class: 'error', role: 'alert', testid: testid + '-error',
						text: upper1(msg) });
					f.replaceWith(p);
				} else if (doc && doc.body && 'ResizeObserver' in window) {
					new ResizeObserver(fit).observe(doc.body);
				}
			} catch (e) {
				/* not readable */
			}
		});
		return f;
	}

	/* ---- compare ---- */

	/* The Before side of a comparison with continuous profiling: no stored profile, the windows
	 * of the hour before @p (GET /v1/compare?base=continuous). */
	function hourBeforeMeta(p) {
		return { question: p.question, when: 'The hour before ' + fmtTime(p.start || p.created),
			answer: 'Continuous profiling of ' + metaWhere(p) + ', every window of that hour ' +
				'merged.' };
	}

	async function renderCompare(r) {
		const gen = S.gen;
		const m = main();
		S.view = { kind: 'compare', gen };
		const base = enc(r.base), nw = enc(r.new);
		const url = '/v1/compare?base=' + base + '&new=' + nw;
		m.appendChild(el('p', { class: 'muted', text: 'Loading the two profiles…' }));
		let a, b;
		try {
			[a, b] = await Promise.all([r.base === 'continuous' ? null :
				api('GET', '/v1/profiles/' + base), api('GET', '/v1/profiles/' + nw)]);
			if (r.base === 'continuous')
				a = { profile: hourBeforeMeta(b.profile || {}) };
		} catch (e) {
			if (gen !== S.gen)
				return;
			clear(m).appendChild(el('p', { class: 'error', role: 'alert', testid: 'compare-error',
				text: upper1(e.message) }));
			return;
		}
		if (gen !== S.gen)
			return;
		const pa = a.profile || {}, pb = b.profile || {};
		clear(m);
		const side = (label, p, testid) => el('section', { class: 'card side', testid },
			el('h2', { text: label }),
			p.id ? el('p', { class: 'muted' }, el('a', { href: '#/profile/' + enc(p.id),
				text: 'Taken ' + fmtTime(p.created) }), ', ' + fmtLength(p.duration_seconds)) :
				el('p', { class: 'muted', text: p.when }),
			el('p', { class: 'answer', text: p.answer || '' }));
		add(m, [
			el('p', { class: 'crumbs' }, el('a', { href: metaRoute(pb), text: '← ' +
				(metaRoute(pb) === '#/profiles' ? 'Profiles' : 'Performance of ' + metaWhere(pb)) })),
			el('h1', { testid: 'compare-title', text: 'Compare: ' + qtext(pb.question) + ', ' +
				metaWhere(pb) }),
			el('div', { class: 'sides' }, side('Before', pa, 'compare-base'),
				side('After', pb, 'compare-new')),
		]);
		if (pa.question !== pb.question) {
			/* The agent says why, in its words. */
			try {
				await api('GET', url + '&format=collapsed');
			} catch (e) {
				if (gen === S.gen)
					m.appendChild(el('p', { class: 'error', role: 'alert', testid: 'compare-error',
						text: upper1(e.message) }));
				return;
			}
		}
		add(m, [
			el('div', { class: 'profile-actions' },
				el('span', { class: 'legend', testid: 'compare-legend' },
					el('span', { class: 'sw grew' }), 'grew', el('span', { class: 'sw shrank' }),
					'shrank, as a share of each profile, from Before to After; hover a box for ' +
					'the numbers'),
				el('span', { class: 'label', text: 'Download' }),
				el('a', { href: url + '&format=collapsed', download: '', class: 'button',
					testid: 'download-diff', text: 'Differential collapsed stacks' })),
			flameFrame(url, 'compare-frame', 'Differential flame graph'),
		]);
	}

	/* ---- the router ---- */

	function render() {
		S.gen++;
		S.view = null;
		stopPolling();
		pageError('');
		if (!S.me)
			return;
		renderHeader();
		const r = parseHash();
		const m = clear(main());
		document.title = 'SlideOps profiler';
		switch (r.kind) {
		case 'server':
		case 'service':
			document.title = (r.kind === 'server' ? 'This server' : 'Service ' + r.name) +
				' · Performance · SlideOps';
			renderPerformance(r);
			break;
		case 'profiles':
			document.title = 'Profiles · SlideOps';
			renderProfiles(r);
			break;
		case 'profile':
			document.title = 'Profile · SlideOps';
			renderProfile(r);
			break;
		case 'compare':
			document.title = 'Compare · SlideOps';
			renderCompare(r);
			break;
		default:
			m.appendChild(el('p', { class: 'error', role: 'alert', text: 'There is no such page. ' }));
			m.appendChild(el('a', { href: '#/server', text: 'Open the server' }));
		}
		startPolling();
	}

	async function start() {
		window.addEventListener('hashchange', () => {
			if (S.me)
				render();
		});
		try {
			const d = await api('GET', '/v1/session');
			if (d && d.signed_in)
				signedIn(d);
			else
				showSignIn('');
		} catch (e) {
			showSignIn(e.status === 401 ? '' : upper1(e.message));
		}
	}

	if (document.readyState === 'loading')
		document.addEventListener('DOMContentLoaded', start);
	else
		start();
})();
