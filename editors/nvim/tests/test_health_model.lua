-- :checkhealth warden asks the model once (through `warden doctor`) and
-- tells a working endpoint, a refused key (401), a wrong URL (404) and a
-- dead server apart; a typo in config.toml is reported with file, line and
-- key, and the model from the environment is still checked.
local H = require('helpers')
local uv = vim.uv or vim.loop

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')

-- The endpoint runs in its own Neovim: the health check blocks this one.
local function start_endpoint()
  local port_file = vim.fn.tempname()
  local job = vim.fn.jobstart({ 'sh', '-c', 'exec "$0" --headless -u NONE -i NONE -c "luafile $1" </dev/null >/dev/null 2>&1',
    vim.v.progpath, here .. '/status_server.lua' }, { env = { PORT_FILE = port_file } })
  H.truthy(job > 0, 'endpoint started')
  H.wait(10000, function()
    return vim.fn.filereadable(port_file) == 1 and (vim.fn.readfile(port_file)[1] or '') ~= ''
  end, 'the endpoint to listen')
  return 'http://127.0.0.1:' .. vim.fn.readfile(port_file)[1], job
end

-- An address where nothing listens.
local function closed_url()
  local tcp = uv.new_tcp()
  tcp:bind('127.0.0.1', 0)
  local port = tcp:getsockname().port
  tcp:close()
  return 'http://127.0.0.1:' .. port .. '/v1'
end

local function with_model(model)
  H.setup({ config = { settings = { model = model } } })
  return H.health_text()
end

H.run('checkhealth warden checks the model', function()
  H.workspace()
  local url, job = start_endpoint()

  local text = with_model({ name = 'm1', baseURL = url .. '/v1', apiKey = 'sk-good' })
  H.health_ok(text, ('model "m1" at %s/v1: the endpoint answers and lists it'):format(url), 'working endpoint')

  text = with_model({ name = 'other', baseURL = url .. '/v1', apiKey = 'sk-good' })
  H.contains(text, 'does not name it', 'a model the endpoint does not list')

  text = with_model({ name = 'm1', baseURL = url .. '/v1', apiKey = 'sk-bad' })
  H.contains(text, 'refused the API key (HTTP 401)', '401')
  H.contains(text, 'ERROR', '401 is an error')

  text = with_model({ name = 'm1', baseURL = url .. '/nope', apiKey = 'sk-good' })
  H.contains(text, 'answered 404 Not Found; the base URL is wrong', '404')

  local start = uv.hrtime()
  text = with_model({ name = 'm1', baseURL = closed_url(), apiKey = 'sk-good' })
  H.contains(text, 'unreachable, nothing answers at that address', 'closed port')
  H.truthy((uv.hrtime() - start) / 1e9 < 10, 'a closed port is reported quickly')

  -- A typo in config.toml: named with its line, and the environment's
  -- model still counts (and is checked).
  local env = H.env({ WARDEN_MODEL = 'm1', OPENAI_BASE_URL = url .. '/v1', OPENAI_API_KEY = 'sk-good' })
  local file = env.XDG_CONFIG_HOME .. '/warden/config.toml'
  vim.fn.writefile({ 'approval_policy = "never"', 'sandbox_mdoe = "read-only"' }, file)
  H.setup({ env = { WARDEN_MODEL = 'm1', OPENAI_BASE_URL = url .. '/v1', OPENAI_API_KEY = 'sk-good' } })
  text = H.health_text()
  H.contains(text, 'config.toml not loaded: config ' .. file .. ':2: unknown key "sandbox_mdoe"', 'config error')
  H.health_ok(text, ('model "m1" at %s/v1: the endpoint answers and lists it'):format(url), 'model from the environment despite the typo')
  -- The twin: the fixed file loads.
  vim.fn.writefile({ 'approval_policy = "never"', 'sandbox_mode = "read-only"' }, file)
  text = H.health_text()
  H.health_ok(text, 'config: ' .. file, 'fixed config')
  vim.fn.jobstop(job)
end)
