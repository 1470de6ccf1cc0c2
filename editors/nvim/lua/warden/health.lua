-- :checkhealth warden — is the binary there, which version, what its sandbox
-- can enforce on this machine, whether config.toml loads and whether the
-- model answers (all from `warden doctor --json`, which asks the model once).
local M = {}

-- 0.7/0.8 have require('health').report_*; 0.9+ has vim.health.start/ok/...
-- (report_* deprecated in 0.10).
local h = vim.health or require('health')
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local info = h.info or h.report_info
local warn = h.warn or h.report_warn
local err = h.error or h.report_error

-- The environment the server gets (cmd_env), with the model settings
-- from setup{settings} on top: the editor's settings win over the
-- environment and config.toml in the server, so they do here too.
local function server_env()
  local cfg = require('warden').config
  local env = vim.deepcopy(cfg.cmd_env or {})
  local model = (cfg.settings or {}).model or {}
  for var, key in pairs({ WARDEN_MODEL = 'name', OPENAI_BASE_URL = 'baseURL', OPENAI_API_KEY = 'apiKey' }) do
    if type(model[key]) == 'string' and model[key] ~= '' then
      env[var] = model[key]
    end
  end
  return env
end

-- Runs the warden binary with the client's environment; returns output, status.
local function run(exe, args)
  local cmd = {}
  local env = server_env()
  if next(env) then
    table.insert(cmd, 'env')
    for k, v in pairs(env) do
      table.insert(cmd, k .. '=' .. tostring(v))
    end
  end
  table.insert(cmd, exe)
  vim.list_extend(cmd, args)
  local out = vim.fn.system(cmd)
  return out, vim.v.shell_error
end

local function trim(s)
  return (s:gsub('^%s+', ''):gsub('%s+$', ''))
end

-- The model named by setup{settings}, the environment or config.toml.
local function configured_model()
  local cfg = require('warden').config
  local model = (cfg.settings or {}).model or {}
  local env = cfg.cmd_env or {}
  local function getenv(k)
    return env[k] or vim.env[k]
  end
  local name, base = model.name, model.baseURL
  local source = 'setup{settings}'
  if getenv('WARDEN_MODEL') and getenv('WARDEN_MODEL') ~= '' then
    name, source = getenv('WARDEN_MODEL'), '$WARDEN_MODEL'
  end
  if getenv('OPENAI_BASE_URL') and getenv('OPENAI_BASE_URL') ~= '' then
    base = getenv('OPENAI_BASE_URL')
  end
  if not name then
    local xdg = getenv('XDG_CONFIG_HOME')
    if not xdg or xdg == '' then
      xdg = vim.fn.expand('~/.config')
    end
    local path = xdg .. '/warden/config.toml'
    if vim.fn.filereadable(path) == 1 then
      local section
      for _, line in ipairs(vim.fn.readfile(path)) do
        local s = line:match('^%s*%[([%w_.]+)%]')
        if s then
          section = s
        elseif section == 'model' then
          local k, v = line:match('^%s*([%w_]+)%s*=%s*"([^"]*)"')
          if k == 'name' then
            name, source = v, path
          elseif k == 'base_url' and not base then
            base = v
          end
        end
      end
    end
  end
  return name, base, source
end

-- What `warden doctor --json` found: whether config.toml loads, and the
-- answer of one real request to the model (GET /models).
local function report_model(cfg, model)
  if cfg.error and cfg.error ~= '' then
    err('config.toml not loaded: ' .. cfg.error, {
      'None of the file applies: the server asks before everything until it is fixed.',
      'Settings from the environment and setup{settings} still apply.',
    })
  elseif cfg.file and cfg.exists == false then
    ok('no config.toml (' .. cfg.file .. '): defaults')
  elseif cfg.file then
    ok('config: ' .. cfg.file)
  end
  if not model.configured then
    warn('no model configured: agent actions (ask, fix, explain) need one', {
      model.missing or 'set WARDEN_MODEL and OPENAI_BASE_URL or OPENAI_API_KEY',
      'or setup{settings = {model = {name = ..., baseURL = ..., apiKey = ...}}}',
    })
    return
  end
  local what = ('model %q%s'):format(model.name or '?', model.base_url and (' at ' .. model.base_url) or '')
  local check = model.check or {}
  if check.status == 'ok' and check.listed then
    ok(what .. ': the endpoint answers and lists it')
  elseif check.status == 'ok' then
    warn(what .. (': the endpoint answers, but its list of %d models does not name it'):format(check.models or 0), {
      'Check the model name (WARDEN_MODEL, [model] name or setup{settings.model.name}).',
    })
  elseif check.status == 'unauthorized' then
    err(what .. (': the endpoint refused the API key (HTTP %s)'):format(check.http_status or '401'), { check.detail })
  elseif check.status == 'not_found' then
    err(what .. ': the endpoint answered 404 Not Found; the base URL is wrong (it usually ends in /v1)', { check.detail })
  elseif check.status == 'unreachable' then
    err(what .. ': unreachable, nothing answers at that address', { check.detail })
  else
    err(what .. ': the request failed', { check.detail or vim.inspect(check) })
  end
end

function M.check()
  local warden = require('warden')
  start('Warden: Neovim')
  if vim.fn.has('nvim-0.7') ~= 1 then
    err('Neovim 0.7 or newer is needed')
  else
    local v = vim.version()
    local how = vim.lsp.start and 'vim.lsp.start' or 'vim.lsp.start_client, attached on FileType'
    if vim.lsp.config then
      how = how .. '; lsp/warden.lua is available for vim.lsp.enable("warden")'
    end
    ok(('Neovim %d.%d.%d: %s'):format(v.major, v.minor, v.patch, how))
    if vim.fn.has('nvim-0.10') ~= 1 then
      info('On this Neovim, approval dialogs and patch reviews are modal: the editor waits for the answer')
    end
  end

  start('Warden: binary')
  local exe = warden.config.cmd[1]
  local path = vim.fn.exepath(exe)
  if path == '' then
    err(('%q not found'):format(exe), {
      'Build it with `make build` (bin/warden) and put it on $PATH,',
      "or set require('warden').setup{cmd = {'/path/to/warden', 'serve'}}",
    })
    return
  end
  ok('found ' .. path)
  local out, status = run(path, { 'version' })
  if status == 0 then
    ok('version: ' .. trim(out))
  else
    err('`warden version` failed: ' .. trim(out))
  end

  start('Warden: sandbox (warden doctor)')
  out, status = run(path, { 'doctor', '--json' })
  local decoded_ok, rep = pcall(vim.json.decode, out)
  if status == 2 and out:find('unknown command', 1, true) then
    warn('this warden has no `doctor` command, so what its sandbox enforces here is unknown')
  elseif status ~= 0 or not decoded_ok or type(rep) ~= 'table' or type(rep.sandbox) ~= 'table' then
    err('`warden doctor --json` failed (exit ' .. status .. '): ' .. trim(out))
  else
    local sb = rep.sandbox
    if sb.refused and sb.refused ~= '' then
      err('sandboxed commands are refused on this machine: ' .. sb.refused, {
        'Warden never runs a command unsandboxed in their place; see `warden doctor`.',
      })
    else
      ok(('sandbox: %s; self-test: %s'):format(sb.mechanism or '?', sb.self_test or '?'))
    end
    for _, layer in ipairs(sb.layers or {}) do
      local line = ('%s: %s — %s'):format(layer.name, layer.enforced and 'enforced' or 'NOT enforced', layer.detail or '')
      if layer.enforced then
        ok(line)
      else
        warn(line)
      end
    end
    for _, gap in ipairs(sb.not_enforced or {}) do
      warn('not enforced here: ' .. gap)
    end
  end

  start('Warden: config and model')
  if type(rep) == 'table' and type(rep.model) == 'table' then
    report_model(rep.config or {}, rep.model)
  else
    -- A warden older than doctor's model check: say what is configured.
    local name, base, source = configured_model()
    if name then
      ok(('model %q%s (from %s)'):format(name, base and (' at ' .. base) or '', source))
    else
      warn('no model configured: agent actions (ask, fix, explain) need one', {
        'Set [model] name and base_url in $XDG_CONFIG_HOME/warden/config.toml,',
        "or WARDEN_MODEL and OPENAI_BASE_URL, or setup{settings = {model = {name = ..., baseURL = ...}}}",
      })
    end
  end

  start('Warden: language server')
  local clients = warden.clients()
  if #clients == 0 then
    info('no Warden client is running (it starts when a file is opened)')
  else
    for _, c in ipairs(clients) do
      ok(('client %d running for %s'):format(c.id, c.config.root_dir or '?'))
    end
  end
end

return M
