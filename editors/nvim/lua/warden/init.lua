-- Warden for Neovim: starts `warden serve` as a language server, answers its
-- approval dialogs through vim.ui.select, reviews its patches as diffs before
-- they land, and shows its progress in the statusline.
--
--   require('warden').setup{}            -- one line is enough
--
-- Neovim 0.7 starts the client with vim.lsp.start_client and attaches it on
-- FileType; 0.8+ uses vim.lsp.start; 0.11+ may instead use lsp/warden.lua with
-- vim.lsp.enable('warden').
local M = {}

local defaults = {
  -- The server command; `warden` must be on $PATH unless this names a path.
  cmd = { 'warden', 'serve' },
  -- Extra environment for the server (XDG dirs, OPENAI_* ...).
  cmd_env = nil,
  -- File types to attach to; nil attaches to every file-backed buffer.
  filetypes = nil,
  -- The workspace is the nearest directory holding one of these, else the
  -- file's directory.
  root_markers = { '.git', '.warden' },
  -- Sent as initializationOptions (see docs/configuration.md):
  -- approvalPolicy, sandboxMode, networkAccess, model = {baseURL, name}, ...
  settings = {},
  -- Start on FileType automatically; false means only :Warden starts it.
  autostart = true,
  review = {
    -- Write accepted files to disk so no hidden modified buffer is left
    -- behind. false leaves them modified, marked and listed instead.
    write = true,
  },
}

M.config = vim.deepcopy(defaults)

local has = function(feature)
  return vim.fn.has(feature) == 1
end

-- Client API calls changed from method-style (client.request) to
-- colon-style (client:request) in 0.11; this keeps one spelling here.
local function client_call(client, name, ...)
  if has('nvim-0.11') then
    return client[name](client, ...)
  end
  return client[name](...)
end
M.client_call = client_call

--- The handlers Warden needs on its client. Exposed so that lsp/warden.lua and
--- hand-written vim.lsp.start configs get the same behaviour.
function M.handlers()
  return {
    ['window/showMessageRequest'] = require('warden.approval').handler,
    ['workspace/applyEdit'] = require('warden.review').handler,
    ['$/progress'] = require('warden.progress').handler,
    ['window/logMessage'] = require('warden.output').log_handler,
  }
end

--- The directory a buffer's workspace is rooted at.
function M.root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or require('warden.compat').uv.cwd()
  for _, marker in ipairs(M.config.root_markers or {}) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found ~= '' then
      return vim.fn.fnamemodify(found, ':p:h:h') -- ':p' ends a directory in '/'
    end
    found = vim.fn.findfile(marker, dir .. ';')
    if found ~= '' then
      return vim.fn.fnamemodify(found, ':p:h')
    end
  end
  return dir
end

-- What the client tells the server beyond Neovim's own capabilities:
-- warden.agent.run sent without an instruction (the "Ask agent…" action) is
-- answered here by asking the user (see commands below).
local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = vim.tbl_extend('force', caps.experimental or {}, { wardenAskAgent = true })
  return caps
end

-- Client-side command handlers: Neovim calls these instead of sending
-- workspace/executeCommand when a code action carries the command.
local function client_commands()
  return {
    ['warden.agent.run'] = function(command, ctx)
      require('warden.commands').run_agent_command(command, ctx)
    end,
  }
end

--- The client configuration for a workspace root.
function M.client_config(root)
  local cfg = M.config
  return {
    name = 'warden',
    cmd = vim.deepcopy(cfg.cmd),
    cmd_env = cfg.cmd_env,
    root_dir = root,
    workspace_folders = root and { { uri = vim.uri_from_fname(root), name = root } } or nil,
    -- An empty Lua table would go out as a JSON array, which is not settings.
    init_options = next(cfg.settings or {}) and cfg.settings or nil,
    settings = next(cfg.settings or {}) and { warden = cfg.settings } or nil,
    handlers = M.handlers(),
    capabilities = capabilities(),
    commands = client_commands(),
    on_attach = function(client, bufnr)
      -- status() now says "warden"; nothing else redraws the statusline
      -- until the next keystroke.
      vim.schedule(function()
        pcall(vim.cmd, 'redrawstatus!')
      end)
      vim.api.nvim_exec_autocmds('User', { pattern = 'WardenAttach', modeline = false })
      if M.config.on_attach then
        M.config.on_attach(client, bufnr)
      end
    end,
  }
end

-- Warden's own directories as its server computes them (config.StateDir,
-- config.ConfigDir), with cmd_env taking precedence over Neovim's environment.
local function own_dir(env, var, fallback)
  local base = env[var] or vim.env[var]
  if base and base:sub(1, 1) == '/' then
    return base .. '/warden'
  end
  local home = env.HOME or vim.env.HOME
  if home and home:sub(1, 1) == '/' then
    return home .. '/' .. fallback .. '/warden'
  end
end

local function inside(path, dir)
  if not dir then
    return false
  end
  dir = vim.fn.resolve(vim.fn.fnamemodify(dir, ':p')):gsub('/+$', '')
  return path == dir or vim.startswith(path, dir .. '/')
end

--- Which of Warden's own directories holds path: 'state' (transcripts, audit
--- log, checkpoints: Warden's records, opened read-only), 'config' (config.toml
--- and rules, which the user edits), or nil. Neither gets a Warden client: its
--- workspace would be Warden's own directory.
function M.own_file(path)
  if not path or path == '' then
    return nil
  end
  path = vim.fn.resolve(vim.fn.fnamemodify(path, ':p'))
  local env = M.config.cmd_env or {}
  if inside(path, own_dir(env, 'XDG_STATE_HOME', '.local/state')) then
    return 'state'
  end
  if inside(path, own_dir(env, 'XDG_CONFIG_HOME', '.config')) then
    return 'config'
  end
end

-- One client per workspace root on 0.7 (vim.lsp.start does this itself on 0.8+).
local clients_by_root = {}

local function attachable(bufnr)
  if vim.bo[bufnr].buftype ~= '' or vim.api.nvim_buf_get_name(bufnr) == '' then
    return false
  end
  if M.own_file(vim.api.nvim_buf_get_name(bufnr)) then
    return false
  end
  local fts = M.config.filetypes
  return fts == nil or vim.tbl_contains(fts, vim.bo[bufnr].filetype)
end

--- Starts (or reuses) the workspace's client and attaches it to bufnr.
--- Returns the client id, or nil and a message when the server cannot start.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local own = M.own_file(vim.api.nvim_buf_get_name(bufnr))
  if own then
    return nil, ('%s is in Warden\'s own %s directory: Warden does not attach to its own files; '
      .. 'open a file of your workspace'):format(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':~'), own)
  end
  if not attachable(bufnr) then
    return nil, 'buffer ' .. bufnr .. ' is not a file Warden attaches to'
  end
  local exe = M.config.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    return nil, ('the warden binary %q was not found: build it with `make build` and put bin/ on $PATH, '
      .. "or set require('warden').setup{cmd = {'/path/to/warden', 'serve'}}"):format(exe)
  end
  local root = M.root_dir(bufnr)
  if vim.lsp.start then
    local id = vim.lsp.start(M.client_config(root), { bufnr = bufnr })
    return id
  end
  local id = clients_by_root[root]
  if not (id and vim.lsp.get_client_by_id(id)) then
    id = vim.lsp.start_client(M.client_config(root))
    if not id then
      return nil, 'warden serve failed to start (see :LspLog)'
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The Warden client attached to bufnr (default: current buffer), if any.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local list
  if vim.lsp.get_clients then
    list = vim.lsp.get_clients({ bufnr = bufnr, name = 'warden' })
  else
    list = vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
  end
  for _, c in ipairs(list) do
    if c.name == 'warden' then
      return c
    end
  end
end

--- Every running Warden client.
function M.clients()
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  return vim.tbl_filter(function(c)
    return c.name == 'warden'
  end, all)
end

--- Runs a warden.* command on the buffer's client. callback(err, result).
function M.execute(command, arguments, callback, bufnr, client)
  client = client or M.client(bufnr)
  if not client then
    local _, err = M.attach(bufnr)
    client = M.client(bufnr)
    if not client then
      local msg = 'Warden: not attached to this buffer' .. (err and (': ' .. err) or '')
      if callback then
        callback({ message = msg })
      else
        vim.notify(msg, vim.log.levels.ERROR)
      end
      return
    end
  end
  local params = { command = command, arguments = arguments }
  client_call(client, 'request', 'workspace/executeCommand', params, function(err, result)
    if callback then
      callback(err, result)
    elseif err then
      vim.notify(('Warden: %s: %s'):format(command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
  end, bufnr)
end

--- Statusline component: the running job's progress, else "warden" while a
--- client is attached, else "".
function M.status()
  return require('warden.progress').status()
end

local augroup

-- :help warden needs doc/tags. The plugin ships it; a copy without it (an
-- install that dropped generated files) gets it made here when writable.
local function ensure_helptags()
  local src = debug.getinfo(1, 'S').source:sub(2)
  local doc = vim.fn.fnamemodify(src, ':p:h:h:h') .. '/doc'
  if vim.fn.filereadable(doc .. '/tags') == 0 and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd, 'silent! helptags ' .. vim.fn.fnameescape(doc))
  end
end

function M.setup(opts)
  ensure_helptags()
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if type(M.config.cmd) == 'string' then
    M.config.cmd = { M.config.cmd, 'serve' }
  end
  augroup = vim.api.nvim_create_augroup('warden', { clear = true })
  -- Warden's records (a transcript, the audit log) are read, never edited:
  -- an edit would falsify the record, and a save could race the server.
  vim.api.nvim_create_autocmd('BufReadPost', {
    group = augroup,
    callback = function(ev)
      if M.own_file(vim.api.nvim_buf_get_name(ev.buf)) == 'state' then
        vim.bo[ev.buf].readonly = true
        vim.bo[ev.buf].modifiable = false
      end
    end,
  })
  if M.config.autostart then
    vim.api.nvim_create_autocmd('FileType', {
      group = augroup,
      pattern = M.config.filetypes or '*',
      callback = function(ev)
        if attachable(ev.buf) then
          local _, err = M.attach(ev.buf)
          if err then
            vim.notify_once('Warden: ' .. err, vim.log.levels.WARN)
          end
        end
      end,
    })
  end
  return M
end

return M
