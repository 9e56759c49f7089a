// SPDX-License-Identifier: Apache-2.0
// A hostile "inspector" (tests/integration/test_node.sh): a Node.js program whose own SIGUSR1
// listener (it replaces Node's: no inspector opens) listens on 127.0.0.1:9229 itself, as the
// inspector would, and then misbehaves as MODE says:
//   garbage   GET /json/list gets bytes that are not HTTP
//   endless   a WebSocket whose first message never ends (fragments without FIN, forever)
//   huge      a WebSocket frame that announces 1 GiB, then streams it
//   flood     a WebSocket that sends events forever and never answers a command
//   silent    a WebSocket that never says anything
// Prints "ready <pid>" once it runs; exits by itself after the seconds given.
'use strict';

const net = require('node:net');
const crypto = require('node:crypto');

const mode = process.argv[2] || 'endless';
const seconds = Number(process.argv[3] || 120);
const PATH = '/0d9b7a44-6b49-4f7e-9d8a-hostile';

function frame(opcode, fin, payload) {
	const len = payload.length;
	const head = len < 126 ? Buffer.from([(fin ? 0x80 : 0) | opcode, len]) :
		Buffer.from([(fin ? 0x80 : 0) | opcode, 126, len >> 8, len & 255]);
	return Buffer.concat([head, payload]);
}

function pump(sock, make) {
	const go = () => {
		while (!sock.destroyed && sock.write(make()));
		if (!sock.destroyed)
			sock.once('drain', go);
	};
	go();
}

function misbehave(sock) {
	const chunk = Buffer.alloc(60000, 'x');
	if (mode === 'endless') {
		sock.write(frame(1, false, Buffer.from('{"method":"')));
		pump(sock, () => frame(0, false, chunk));
	} else if (mode === 'huge') {
		const head = Buffer.alloc(10);
		head[0] = 0x81;
		head[1] = 127;
		head.writeBigUInt64BE(1n << 30n, 2);
		sock.write(head);
		pump(sock, () => chunk);
	} else if (mode === 'flood') {
		const ev = frame(1, true, Buffer.from('{"method":"Runtime.consoleAPICalled","params":{}}'));
		pump(sock, () => Buffer.concat(Array(500).fill(ev)));
	}
	sock.on('data', () => {});
}

function answer(sock, req) {
	const line = req.split('\r\n')[0];
	if (mode === 'garbage') {
		sock.end(Buffer.from([0, 1, 2, 255, 254, 10, 13, 10]));
		return;
	}
	if (line.startsWith('GET /json')) {
		const body = JSON.stringify([{ type: 'node', id: 'x',
			webSocketDebuggerUrl: 'ws://127.0.0.1:9229' + PATH }]);
		sock.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ' +
			Buffer.byteLength(body) + '\r\n\r\n' + body);
		return;
	}
	const key = /sec-websocket-key: *([^\r\n]+)/i.exec(req);
	if (!key) {
		sock.end('HTTP/1.1 400 Bad Request\r\n\r\n');
		return;
	}
	const accept = crypto.createHash('sha1')
		.update(key[1].trim() + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
	sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n' +
		'Connection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n');
	misbehave(sock);
}

let server = null;
process.on('SIGUSR1', () => {
	if (server)
		return;
	server = net.createServer((sock) => {
		let req = '';
		sock.on('error', () => {});
		const onData = (d) => {
			req += d.toString('latin1');
			if (req.includes('\r\n\r\n')) {
				sock.removeListener('data', onData);
				answer(sock, req);
			}
		};
		sock.on('data', onData);
	});
	server.listen(9229, '127.0.0.1');
});

setInterval(() => {}, 1000);
setTimeout(() => process.exit(0), seconds * 1000).unref();
console.log('ready ' + process.pid);
