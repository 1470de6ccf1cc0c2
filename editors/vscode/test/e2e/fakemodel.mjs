// A local stand-in for an OpenAI-compatible model: it speaks the Chat
// Completions streaming protocol (server-sent events, tool calls streamed in
// fragments) on loopback and plays the turns a test scripts.
import { createServer } from 'node:http';

/**
 * Starts the fake model. `respond(request)` returns the next turn for a
 * request: {text} for an answer, {calls: [{name, args}]} for tool calls,
 * {hold: true} for a stream that stays open until the client leaves. Every
 * request body is kept in `requests`, its Authorization header (or null) at
 * the same index in `authorizations`; `abandoned` counts streams the client
 * closed before they ended.
 */
export async function startFakeModel(respond) {
  const requests = [];
  const authorizations = [];
  const state = { abandoned: 0 };
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake model: no route ${req.method} ${req.url}` } }));
      return;
    }
    let body = '';
    for await (const chunk of req) body += chunk;
    const request = JSON.parse(body);
    requests.push(request);
    authorizations.push(req.headers.authorization ?? null);
    let turn;
    try {
      turn = respond(request);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake model: ${err.message}` } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (delta, finish = null) => res.write(`data: ${JSON.stringify({
      id: 'chatcmpl-fake', object: 'chat.completion.chunk', model: 'fake',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`);
    send({ role: 'assistant' });
    if (turn.hold) {
      res.on('close', () => { state.abandoned++; });
      return;
    }
    for (const word of (turn.text ?? '').split(/(?<= )/)) if (word) send({ content: word });
    (turn.calls ?? []).forEach((call, i) => {
      const args = JSON.stringify(call.args);
      send({ tool_calls: [{ index: i, id: `call_${requests.length}_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] });
      for (let at = 0; at < args.length; at += 9) {
        send({ tool_calls: [{ index: i, function: { arguments: args.slice(at, at + 9) } }] });
      }
    });
    send({}, turn.calls?.length ? 'tool_calls' : 'stop');
    res.end('data: [DONE]\n\n');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    authorizations,
    get abandoned() { return state.abandoned; },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
