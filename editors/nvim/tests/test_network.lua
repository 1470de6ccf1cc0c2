-- Network approvals end to end: the scripted model's shell tool runs curl
-- in the sandbox against an HTTP server on the host's loopback; Warden's
-- proxy asks the editor about the destination, the user answers in the
-- picker, and the model's next request shows what happened.
local H = require('helpers')

local uv = vim.uv or vim.loop

-- A plain HTTP server on 127.0.0.1 (outside the sandbox) that serves body
-- for every GET and counts the requests it answered.
local function host_server(body)
  local self = { hits = 0 }
  local server = uv.new_tcp()
  assert(server:bind('127.0.0.1', 0))
  self.port = server:getsockname().port
  server:listen(16, function(err)
    assert(not err, err)
    local sock = uv.new_tcp()
    server:accept(sock)
    local buf = ''
    sock:read_start(function(rerr, data)
      if rerr or not data then
        sock:close()
        return
      end
      buf = buf .. data
      if not buf:find('\r\n\r\n', 1, true) then
        return
      end
      sock:read_stop()
      self.hits = self.hits + 1
      local head = ('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n'):format(#body)
      sock:write(head .. body, function()
        sock:shutdown(function()
          sock:close()
        end)
      end)
    end)
  end)
  function self.stop()
    server:close()
  end
  return self
end

-- The tool message the model received in request req (the shell's output).
local function tool_output(req)
  for _, m in ipairs(req.messages or {}) do
    if m.role == 'tool' then
      return type(m.content) == 'string' and m.content or vim.json.encode(m.content)
    end
  end
  error('no tool message in ' .. vim.inspect(req.messages))
end

H.run('network dialog: allow once downloads, deny fails with the reason', function()
  if vim.fn.executable('curl') ~= 1 then
    H.log('SKIP network dialog: curl is not installed')
    vim.cmd('qa!')
    return
  end
  local content = 'payload from the host ' .. tostring(os.time())
  local srv = host_server(content)
  local url = ('http://127.0.0.1:%d/file'):format(srv.port)
  -- 127.0.0.1 inside the sandbox is the sandbox's own loopback (NO_PROXY
  -- sends it there); --noproxy '' makes curl go through Warden's proxy to
  -- the host's server, as it would to any outside host.
  local curl = vim.json.encode({ command = { 'curl', '-sS', '-f', '--noproxy', '', url } })
  local model = require('fake_model').start({
    { calls = { { name = 'shell', args = curl } } },
    { text = 'Downloaded.' },
    { calls = { { name = 'shell', args = curl } } },
    { text = 'Refused.' },
  })
  local ws = H.workspace({ ['main.txt'] = 'hello' })
  -- The defaults: workspace-write, network ask, approval on-request.
  H.setup({ env = { OPENAI_BASE_URL = model.url, OPENAI_API_KEY = 'test-key', WARDEN_MODEL = 'fake-model' } })
  H.open(ws .. '/main.txt')
  local messages = {}
  vim.lsp.handlers['window/showMessage'] = function(_, r)
    table.insert(messages, r.message)
  end

  -- :Warden status says the network is asked for.
  local notify, status = vim.notify, nil
  vim.notify = function(msg)
    status = msg
  end
  vim.cmd('Warden status')
  H.wait(5000, function()
    return status ~= nil
  end, ':Warden status to answer')
  vim.notify = notify
  H.contains(status, 'policy: approval on-request, sandbox workspace-write, network ask', ':Warden status')

  -- Runs the agent once, answering every dialog with the action titled
  -- choice; returns the dialogs shown (prompt, titles, whole message).
  local function agent_run(choice, done_text)
    local shown = {}
    vim.ui.select = function(items, opts, on_choice)
      local titles = vim.tbl_map(opts.format_item, items)
      table.insert(shown, { prompt = opts.prompt, titles = titles, message = require('warden.approval').last.params.message })
      for i, title in ipairs(titles) do
        if title == choice then
          return on_choice(items[i], i)
        end
      end
      error(('no action %q among %s'):format(choice, vim.inspect(titles)))
    end
    local _, err = H.execute('warden.agent.run', { { instruction = 'Download ' .. url } })
    H.eq(nil, err, 'warden.agent.run error')
    H.wait(30000, function()
      return vim.tbl_contains(messages, 'Warden: agent: ' .. done_text)
    end, 'the agent to finish (messages: ' .. vim.inspect(messages) .. ')')
    return shown
  end

  -- Allow once: one dialog naming the destination; the download succeeds
  -- and the model reads the file's content in the tool output.
  local shown = agent_run('Allow once', 'Downloaded.')
  H.eq(1, #shown, 'one dialog (the network question): ' .. vim.inspect(shown))
  local d = shown[1]
  H.contains(d.message, ('wants to connect to 127.0.0.1 port %d (http)'):format(srv.port), 'the dialog names host, port and protocol')
  H.contains(d.message, 'curl -sS -f --noproxy', 'the dialog names the command')
  H.contains(d.message, 'in ' .. ws, 'the dialog names the directory')
  H.contains(d.message, 'First contact with this host this session', 'the dialog gives the facts')
  H.contains(d.prompt, '127.0.0.1 port ' .. srv.port, 'the picker prompt names the destination')
  H.eq({ 'Allow once', 'Allow for session', 'Always allow `127.0.0.1`', 'Deny', 'Deny and stop' }, d.titles, 'the actions, in order')
  H.eq(1, srv.hits, 'the host server was reached once')
  local out = tool_output(model.requests[2])
  H.contains(out, content, 'the model received the downloaded content')

  -- Deny (Allow once was not remembered, so it asks again): curl fails,
  -- the server is not reached, and the model is told who refused what.
  local notified = {}
  vim.notify = function(msg)
    table.insert(notified, msg)
  end
  shown = agent_run('Deny', 'Refused.')
  vim.notify = notify
  -- :messages says how the command ended and who refused what.
  local outcome = table.concat(notified, '\n')
  H.contains(outcome, "Warden: agent: `curl -sS -f --noproxy '' " .. url .. '` exited 22 (sandboxed', 'the command, its exit status, sandboxed')
  H.contains(outcome, ('proxy: network to 127.0.0.1:%d denied by the user'):format(srv.port), 'the refused destination')
  H.eq(1, #shown, 'asked again after Allow once: ' .. vim.inspect(shown))
  H.contains(shown[1].message, '127.0.0.1 port ' .. srv.port, 'the second dialog names the destination')
  H.eq(1, srv.hits, 'denied: the host server was not reached')
  out = tool_output(model.requests[4])
  H.truthy(not out:find(content, 1, true), 'denied: no content reached the model: ' .. out)
  H.contains(out, '403', 'curl failed on the proxy\'s refusal')
  H.contains(out, ('[Warden proxy: network to 127.0.0.1:%d'):format(srv.port), 'the model is told the host was refused')
  H.contains(out, 'denied by the user', 'the model is told why')
  model.stop()
  srv.stop()
end)
