-- A local HTTP server inside the test's Neovim that speaks the OpenAI Chat
-- Completions streaming protocol and plays scripted turns, so the real
-- warden binary can run its agent without a hosted model. The only fake in
-- these tests: a hosted model API cannot run here.
--
--   local model = require('fake_model').start({
--     { text = 'Done.' },
--     { calls = { { name = 'apply_patch', args = vim.json.encode({ input = patch }) } } },
--     { hold = true },  -- streams, then waits until the client goes away
--   })
--   -- model.url is OPENAI_BASE_URL; model.requests holds each decoded request.
local M = {}

local uv = vim.uv or vim.loop

local function chunk(delta, finish)
  return 'data: '
    .. vim.json.encode({
      id = 'chatcmpl-fake',
      object = 'chat.completion.chunk',
      model = 'fake',
      choices = { { index = 0, delta = delta, finish_reason = finish or vim.NIL } },
    })
    .. '\n\n'
end

-- The body of a streamed reply for one turn.
local function stream(turn)
  local out = { chunk({ role = 'assistant' }) }
  if turn.text then
    for word in turn.text:gmatch('%S+%s*') do
      table.insert(out, chunk({ content = word }))
    end
  end
  for i, call in ipairs(turn.calls or {}) do
    table.insert(out, chunk({ tool_calls = { {
      index = i - 1,
      id = call.id or ('call_' .. i),
      type = 'function',
      ['function'] = { name = call.name, arguments = '' },
    } } }))
    local args = call.args
    while #args > 0 do
      local frag = args:sub(1, 11)
      args = args:sub(12)
      table.insert(out, chunk({ tool_calls = { { index = i - 1, ['function'] = { arguments = frag } } } }))
    end
  end
  table.insert(out, chunk(vim.empty_dict(), turn.calls and 'tool_calls' or 'stop'))
  table.insert(out, 'data: [DONE]\n\n')
  return table.concat(out)
end

local function respond(sock, status, ctype, body)
  local head = ('HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n')
    :format(status, status == 200 and 'OK' or 'Error', ctype, #body)
  sock:write(head .. body, function()
    sock:shutdown(function()
      sock:close()
    end)
  end)
end

--- Starts the server on 127.0.0.1 with a script of turns (played in order).
--- respond(request) may choose a turn when the script has none left.
function M.start(turns, responder)
  local self = { requests = {}, script = vim.deepcopy(turns or {}), held = {}, abandoned = 0 }
  local server = uv.new_tcp()
  assert(server:bind('127.0.0.1', 0))
  local port = server:getsockname().port
  self.url = ('http://127.0.0.1:%d/v1'):format(port)
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
      local head_end = buf:find('\r\n\r\n', 1, true)
      if not head_end then
        return
      end
      local head = buf:sub(1, head_end - 1)
      local len = tonumber(head:lower():match('content%-length:%s*(%d+)')) or 0
      if #buf < head_end + 3 + len then
        return
      end
      sock:read_stop()
      local body = buf:sub(head_end + 4, head_end + 3 + len)
      local path = head:match('^%u+ (%S+)')
      vim.schedule(function()
        if not (path and path:match('/chat/completions$')) then
          return respond(sock, 404, 'application/json', vim.json.encode({ error = { message = 'fake model: no route ' .. tostring(path) } }))
        end
        local ok, req = pcall(vim.json.decode, body)
        if not ok then
          return respond(sock, 400, 'application/json', vim.json.encode({ error = { message = 'fake model: bad JSON' } }))
        end
        table.insert(self.requests, req)
        local turn = table.remove(self.script, 1)
        if not turn and responder then
          turn = responder(req)
        end
        if not turn then
          return respond(sock, 500, 'application/json', vim.json.encode({ error = { message = ('fake model: request %d has no scripted turn'):format(#self.requests) } }))
        end
        if turn.hold then
          -- Start the stream, then keep it open until the client goes away
          -- (a cancelled run) or the server stops.
          sock:write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n' .. chunk({ role = 'assistant' }))
          table.insert(self.held, sock)
          sock:read_start(function(_, more)
            if not more then
              self.abandoned = self.abandoned + 1
              if not sock:is_closing() then
                sock:close()
              end
            end
          end)
          return
        end
        respond(sock, 200, 'text/event-stream', stream(turn))
      end)
    end)
  end)
  function self.push(turn)
    table.insert(self.script, turn)
  end
  function self.stop()
    for _, sock in ipairs(self.held) do
      if not sock:is_closing() then
        sock:close()
      end
    end
    server:close()
  end
  return self
end

return M
