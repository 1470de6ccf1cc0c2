-- Shared helpers for the headless tests. Each test file calls H.run(fn):
-- fn runs under xpcall; a failure prints the traceback and exits 1.
local H = {}

local uv = vim.uv or vim.loop

-- Headless Neovim would wait for ever on the built-in prompts: a test that
-- reaches one without stubbing it fails at once, saying where.
local function unexpected(what)
  return function(_, opts)
    H.log(('FAIL unexpected %s (%s)\n%s'):format(what, vim.inspect(opts and opts.prompt), debug.traceback()))
    vim.cmd('cquit 1')
  end
end
vim.ui.input = function(opts)
  unexpected('vim.ui.input')(nil, opts)
end
vim.ui.select = function(_, opts)
  unexpected('vim.ui.select')(nil, opts)
end

function H.log(...)
  local parts = {}
  for _, v in ipairs({ ... }) do
    table.insert(parts, type(v) == 'string' and v or vim.inspect(v))
  end
  io.stderr:write(table.concat(parts, ' ') .. '\n')
end

function H.run(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    -- Nothing the plugin (or these tests) called may be deprecated on the
    -- Neovim running them: vim.deprecate() says so in :messages.
    local msgs = vim.api.nvim_exec2 and vim.api.nvim_exec2('messages', { output = true }).output
      or vim.api.nvim_exec('messages', true)
    if msgs:find('deprecated', 1, true) then
      ok, err = false, 'a deprecated function was called:\n' .. msgs
    end
  end
  if ok then
    H.log('PASS ' .. name)
    vim.cmd('qa!')
  else
    H.log('FAIL ' .. name .. ': ' .. tostring(err))
    local msgs = vim.api.nvim_exec2 and vim.api.nvim_exec2('messages', { output = true }).output
      or vim.api.nvim_exec('messages', true)
    if msgs ~= '' then
      H.log('messages:\n' .. msgs)
    end
    vim.cmd('cquit 1')
  end
end

function H.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(('%s: want %s, got %s'):format(what or 'value', vim.inspect(want), vim.inspect(got)), 2)
  end
end

function H.truthy(v, what)
  if not v then
    error((what or 'condition') .. ' is false', 2)
  end
  return v
end

function H.contains(haystack, needle, what)
  if type(haystack) ~= 'string' or not haystack:find(needle, 1, true) then
    error(('%s: %s does not contain %q'):format(what or 'text', vim.inspect(haystack), needle), 2)
  end
end

-- Waits for cond (processing events meanwhile); fails after ms.
function H.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    error('timed out waiting for ' .. (what or 'condition'), 2)
  end
end

function H.bin()
  local bin = vim.env.WARDEN_BIN
  assert(bin and bin ~= '' and vim.fn.executable(bin) == 1, 'WARDEN_BIN must name the built warden binary (make build)')
  return bin
end

local tmp_root
-- A fresh workspace directory (with .git so it is a root) and files in it.
function H.workspace(files)
  tmp_root = vim.fn.tempname()
  local ws = tmp_root .. '/ws'
  vim.fn.mkdir(ws .. '/.git', 'p')
  for name, content in pairs(files or {}) do
    local path = ws .. '/' .. name
    vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
    vim.fn.writefile(type(content) == 'table' and content or vim.split(content, '\n', { plain = true }), path)
  end
  return ws
end

-- An isolated home and XDG dirs for the server, under the test's temp dir.
function H.env(extra)
  local base = tmp_root or vim.fn.tempname()
  local env = {
    HOME = base .. '/home',
    XDG_CONFIG_HOME = base .. '/config',
    XDG_STATE_HOME = base .. '/state',
    XDG_CACHE_HOME = base .. '/cache',
    OPENAI_API_KEY = '',
    OPENAI_BASE_URL = '',
    WARDEN_MODEL = '',
  }
  vim.fn.mkdir(env.XDG_CONFIG_HOME .. '/warden', 'p')
  vim.fn.mkdir(env.XDG_STATE_HOME, 'p')
  for k, v in pairs(extra or {}) do
    env[k] = v
  end
  vim.fn.mkdir(env.HOME, 'p')
  return env
end

-- Sets Warden up against the real binary with isolated XDG dirs.
function H.setup(opts)
  opts = opts or {}
  local env = H.env(opts.env)
  -- The health check and anything else that runs warden directly sees them too.
  for k, v in pairs(env) do
    vim.env[k] = v
  end
  local cfg = vim.tbl_deep_extend('force', { cmd = { H.bin(), 'serve' }, cmd_env = env }, opts.config or {})
  return require('warden').setup(cfg)
end

-- Opens path and waits until the Warden client is attached and initialized.
function H.open(path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local warden = require('warden')
  H.wait(10000, function()
    local c = warden.client()
    return c ~= nil and c.initialized and not warden.client_call(c, 'is_stopped')
  end, 'the warden client to attach to ' .. path)
  return warden.client(), vim.api.nvim_get_current_buf()
end

-- Runs workspace/executeCommand and waits for the answer.
function H.execute(command, args, timeout)
  local done, err, res
  require('warden').execute(command, args, function(e, r)
    done, err, res = true, e, r
  end)
  H.wait(timeout or 10000, function()
    return done
  end, command .. ' to answer')
  return res, err
end

-- Replaces vim.ui.select: answer(items, opts) returns the item to pick (or
-- nil to cancel). Records every call in the returned list.
function H.stub_select(answer)
  local calls = {}
  vim.ui.select = function(items, opts, on_choice)
    local pick = answer(items, opts)
    table.insert(calls, { items = items, opts = opts, pick = pick })
    local idx
    for i, it in ipairs(items) do
      if it == pick then
        idx = i
      end
    end
    on_choice(pick, idx)
  end
  return calls
end

-- The item whose title (or format_item text) equals title.
function H.by_title(title)
  return function(items, opts)
    for _, it in ipairs(items) do
      local text = opts and opts.format_item and opts.format_item(it) or it.title
      if text == title then
        return it
      end
    end
    error(('no item titled %q among %s'):format(title, vim.inspect(vim.tbl_map(function(it)
      return opts and opts.format_item and opts.format_item(it) or it.title
    end, items))))
  end
end

-- Neovim 0.10+ runs a server request's handler in a coroutine, so it may
-- yield (the approval picker and the review wait there); 0.7 cannot.
H.yields = vim.fn.has('nvim-0.10') == 1

-- An OK line of :checkhealth: "OK: text" up to 0.9, "OK text" (vim.health) after.
-- Runs :checkhealth warden and returns its text.
function H.health_text()
  vim.cmd('checkhealth warden')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  vim.cmd('bwipeout!')
  return text
end

function H.health_ok(text, msg, what)
  if not (text:find('OK: ' .. msg, 1, true) or text:find('OK ' .. msg, 1, true)) then
    error(('%s: no OK line %q in %s'):format(what or 'checkhealth', msg, text), 2)
  end
end

-- Decides the next patch review with fn(session) when it opens.
function H.on_review(fn)
  vim.api.nvim_create_autocmd('User', {
    pattern = 'WardenReviewOpen',
    once = true,
    callback = function()
      fn(require('warden.review').current())
    end,
  })
end

-- Appends to ends each job that finishes from now on (its closing
-- progress, warden.progress.last_finished), in order.
function H.collect_job_ends(ends)
  local progress = require('warden.progress')
  vim.api.nvim_create_autocmd('User', {
    pattern = 'WardenProgress',
    callback = function()
      if progress.last_finished and progress.last_finished ~= ends[#ends] then
        table.insert(ends, progress.last_finished)
      end
    end,
  })
end

function H.read(path)
  return vim.fn.readfile(path)
end

function H.exists(path)
  return uv.fs_stat(path) ~= nil
end

return H
