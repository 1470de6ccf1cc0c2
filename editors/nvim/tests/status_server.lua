-- A model endpoint for :checkhealth tests, run in its own headless Neovim
-- (the health check blocks the test's Neovim while warden asks it):
--   nvim --headless -u NONE -i NONE -c 'luafile tests/status_server.lua'
-- with $PORT_FILE, where it writes its port. GET /v1/models with
-- "Authorization: Bearer sk-good" lists model m1; another key gets 401;
-- any other path 404.
local uv = vim.uv or vim.loop

local function respond(sock, status, body)
  local head = ('HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n'):format(status, #body)
  sock:write(head .. body, function()
    sock:shutdown(function()
      sock:close()
    end)
  end)
end

local server = uv.new_tcp()
server:bind('127.0.0.1', 0)
server:listen(16, function()
  local sock = uv.new_tcp()
  server:accept(sock)
  local buf = ''
  sock:read_start(function(_, data)
    if not data then
      sock:close()
      return
    end
    buf = buf .. data
    if not buf:find('\r\n\r\n', 1, true) then
      return
    end
    sock:read_stop()
    local path = buf:match('^%u+ (%S+)')
    local auth = buf:match('\r\n[Aa]uthorization: ([^\r]*)')
    if path ~= '/v1/models' then
      respond(sock, 404, '{"error":{"message":"no route ' .. path .. '"}}')
    elseif auth ~= 'Bearer sk-good' then
      respond(sock, 401, '{"error":{"message":"Incorrect API key provided"}}')
    else
      respond(sock, 200, '{"object":"list","data":[{"id":"m1","object":"model"}]}')
    end
  end)
end)
local f = assert(io.open(os.getenv('PORT_FILE'), 'w'))
f:write(tostring(server:getsockname().port))
f:close()
