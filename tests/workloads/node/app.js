// SPDX-License-Identifier: Apache-2.0
// The Node.js test program (tests/integration/test_node.sh). `node app.js cpu` spends its time
// in hotLoop() called from outerCaller(); `node app.js mem` drops short-lived objects in
// makeGarbage() and keeps objects in a growing Map in retainObjects(). Prints "ready <pid>" once
// it runs, and exits by itself after the seconds given as the second argument.
'use strict';

const mode = process.argv[2] || 'cpu';
const seconds = Number(process.argv[3] || 120);

// Too large for V8 to inline (its budget is 460 bytes of bytecode): the two functions keep
// frames of their own in V8's profile, as most functions of a real program do.
function rare(x) {
	if (x < 0) {
		x = x * 3 + 1; x = x * 5 + 2; x = x * 7 + 3; x = x * 11 + 4; x = x * 13 + 5;
		x = x * 17 + 6; x = x * 19 + 7; x = x * 23 + 8; x = x * 29 + 9; x = x * 31 + 10;
		x = x * 37 + 11; x = x * 41 + 12; x = x * 43 + 13; x = x * 47 + 14; x = x * 53 + 15;
		x = x * 59 + 16; x = x * 61 + 17; x = x * 67 + 18; x = x * 71 + 19; x = x * 73 + 20;
		x = x * 79 + 21; x = x * 83 + 22; x = x * 89 + 23; x = x * 97 + 24; x = x * 101 + 25;
		x = x * 103 + 26; x = x * 107 + 27; x = x * 109 + 28; x = x * 113 + 29; x = x * 127 + 30;
		x = x * 131 + 31; x = x * 137 + 32; x = x * 139 + 33; x = x * 149 + 34; x = x * 151 + 35;
		x = x * 157 + 36; x = x * 163 + 37; x = x * 167 + 38; x = x * 173 + 39; x = x * 179 + 40;
	}
	return x;
}

function hotLoop(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += Math.sqrt(i) * (i % 7);
	if (n < 0) {
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
		s = rare(s) + rare(s + 1) + rare(s + 2) + rare(s + 3) + rare(s + 4) + rare(s + 5);
	}
	return s;
}

function outerCaller(k0) {
	let t = 0;
	for (let k = 0; k < 10; k++)
		t += hotLoop(100000);
	if (k0 < 0) {
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
		t = rare(t) + rare(t + 1) + rare(t + 2) + rare(t + 3) + rare(t + 4) + rare(t + 5);
	}
	return t;
}

// about 50 ms of work at a time, so that the event loop turns (timers, the exit)
function spin() {
	const end = Date.now() + 50;
	let t = 0;
	while (Date.now() < end)
		t += outerCaller(1);
	globalThis.sink = t;
	setImmediate(spin);
}

function makeGarbage(n) {
	let last;
	for (let i = 0; i < n; i++)
		last = { index: i, text: 'garbage ' + i, list: [i, i + 1, i + 2, i + 3] };
	if (n < 0) {
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
	}
	return last;
}

const kept = new Map();
let seq = 0;

function retainObjects(n) {
	for (let i = 0; i < n; i++) {
		seq++;
		kept.set(seq, { id: seq, payload: new Array(32).fill(seq) });
	}
	if (n < 0) {
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
		n = rare(n) + rare(n + 1) + rare(n + 2) + rare(n + 3) + rare(n + 4) + rare(n + 5);
	}
	return n;
}

function churn() {
	globalThis.sink = makeGarbage(4000);
	retainObjects(20);
	setTimeout(churn, 2);
}

if (mode === 'mem')
	churn();
else
	spin();
setTimeout(() => process.exit(0), seconds * 1000).unref();
console.log('ready ' + process.pid);
