-- :Warden {ask|fix|explain|run|cancel|undo|status|policy} and :WardenAsk.
-- Each subcommand becomes one warden.* workspace/executeCommand.
local M = {}

local policies = { 'untrusted', 'on-failure', 'on-request', 'never', 'granular' }
-- The prompt categories `granular` may auto-reject (config's granular_reject).
local granular_categories = { 'sandbox_escalation', 'rules', 'patches' }

local function warden()
  return require('warden')
end

local function notify(msg, level)
  vim.notify('Warden: ' .. msg, level or vim.log.levels.INFO)
end

-- Where the command applies: the buffer's URI and a range, as LSP wants:
-- the lines of :'<,'>Warden, else the cursor (the server takes its line).
local function location(cmd)
  local bufnr = vim.api.nvim_get_current_buf()
  local range
  if cmd and cmd.range and cmd.range > 0 then
    range = { start = { line = cmd.line1 - 1, character = 0 }, ['end'] = { line = cmd.line2, character = 0 } }
  else
    local cur = vim.api.nvim_win_get_cursor(0)
    local pos = { line = cur[1] - 1, character = cur[2] }
    range = { start = pos, ['end'] = pos }
  end
  return { bufnr = bufnr, uri = vim.uri_from_bufnr(bufnr), range = range }
end

local function started(label)
  return function(err, result)
    if err then
      notify(label .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif type(result) == 'table' and result.jobId then
      M.last_job = result.jobId
      notify(('%s started (job %s)'):format(label, result.jobId))
    end
  end
end

--- Runs a warden.agent.run command (from a code action or :Warden). Without
--- an instruction (the "Ask agent…" action) it asks with vim.ui.input first.
function M.run_agent_command(command, ctx)
  local arg = vim.deepcopy((command.arguments or {})[1] or {})
  local client = ctx and ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id) or nil
  local function send()
    warden().execute('warden.agent.run', { arg }, started('agent'), ctx and ctx.bufnr, client)
  end
  -- A built-in mode (fix, explain, tests, comment) is an instruction of its
  -- own; only a bare or "ask" request needs the user's words.
  local has_words = arg.instruction and vim.trim(arg.instruction) ~= ''
  if has_words or (arg.mode and arg.mode ~= '' and arg.mode ~= 'ask') then
    return send()
  end
  vim.ui.input({ prompt = 'Warden, please: ' }, function(text)
    if text and vim.trim(text) ~= '' then
      arg.instruction = text
      send()
    end
  end)
end

-- An ask names the file; only the lines of :'<,'>Warden ask go as selected
-- code: the cursor's line is not something the user chose to show.
local function agent(instruction, cmd)
  local loc = location(cmd)
  local selected = cmd and cmd.range and cmd.range > 0
  local arg = { instruction = instruction, uri = loc.uri, range = selected and loc.range or nil }
  M.run_agent_command({ arguments = { arg } }, { bufnr = loc.bufnr })
end

-- The diagnostics on the range's lines, in LSP form.
local function lsp_diagnostics(bufnr, range)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.lnum >= range.start.line and d.lnum <= range['end'].line then
      table.insert(out, d.user_data and d.user_data.lsp or {
        range = {
          start = { line = d.lnum, character = d.col },
          ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
        },
        message = d.message,
        severity = d.severity,
        source = d.source,
      })
    end
  end
  return out
end

-- Runs the server's own agent code action of a kind (fix, explain) for the
-- cursor or range, with the user's extra words added to its instruction.
local function agent_action(kind, extra, cmd)
  local loc = location(cmd)
  local client = warden().client(loc.bufnr)
  if not client then
    return notify('not attached to this buffer', vim.log.levels.ERROR)
  end
  local diagnostics = lsp_diagnostics(loc.bufnr, loc.range)
  if kind == 'quickfix' and #diagnostics == 0 then
    return notify('no diagnostics here to fix', vim.log.levels.WARN)
  end
  local params = {
    textDocument = { uri = loc.uri },
    range = loc.range,
    context = { diagnostics = diagnostics, only = { kind } },
  }
  warden().client_call(client, 'request', 'textDocument/codeAction', params, function(err, actions)
    if err then
      return notify('code actions failed: ' .. (err.message or ''), vim.log.levels.ERROR)
    end
    for _, a in ipairs(actions or {}) do
      local c = a.command
      if type(c) == 'table' and c.command == 'warden.agent.run' then
        local arg = c.arguments and c.arguments[1]
        if extra and arg then
          local given = arg.instruction and vim.trim(arg.instruction) or ''
          arg.instruction = given == '' and extra or (given .. '\n' .. extra)
        end
        return M.run_agent_command(c, { bufnr = loc.bufnr, client_id = client.id })
      end
    end
    notify('the server offers no agent action of kind ' .. kind .. ' here', vim.log.levels.WARN)
  end, loc.bufnr)
end

-- How many recorded changes :Warden status lists.
local shown_changes = 5

-- The local clock time of a server timestamp (RFC 3339, UTC).
local function local_time(stamp)
  local y, mo, d, h, mi, sec = (stamp or ''):match('^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)')
  if not y then
    return '--:--:--'
  end
  local utc = { year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(sec) }
  -- os.time reads the table as local time: add the zone's offset back.
  local now = os.time()
  local offset = os.difftime(now, os.time(os.date('!*t', now)))
  return os.date('%H:%M:%S', os.time(utc) + offset)
end

--- The lines of :Warden status that list what undo can revert (warden.status
--- changes), newest first: time, kind, summary; undone ones marked.
function M.change_lines(changes)
  if type(changes) ~= 'table' or #changes == 0 then
    return { 'changes: none recorded' }
  end
  local pending = #vim.tbl_filter(function(c)
    return not c.undone
  end, changes)
  local lines = { ('changes: %d undo can revert (:Warden undo [steps])'):format(pending) }
  for i, c in ipairs(changes) do
    if i > shown_changes then
      table.insert(lines, ('  … and %d older'):format(#changes - shown_changes))
      break
    end
    local line = ('  %s %-7s %s'):format(local_time(c.time), c.kind or '?', c.summary or '')
    if c.undone then
      line = line .. ' (undone)'
    end
    if c.lost and #c.lost > 0 then
      line = line .. '; not recoverable: ' .. table.concat(c.lost, ', ')
    end
    table.insert(lines, line)
  end
  return lines
end

local function show_status(_, result)
  if type(result) ~= 'table' then
    return
  end
  local policy = result.policy or {}
  -- network is off, ask (per host, through Warden's proxy) or on; servers
  -- before network ask only send networkAccess.
  local network = policy.network or (policy.networkAccess and 'on' or 'off')
  local lines = {
    ('warden %s'):format(result.version or '?'),
    ('policy: approval %s, sandbox %s, network %s'):format(policy.approvalPolicy or '?', policy.sandboxMode or '?', network),
    ('model: %s'):format(result.model and result.model.configured and (result.model.name .. (result.model.baseURL and (' at ' .. result.model.baseURL) or '')) or 'not configured'),
    ('open documents: %d'):format(result.openDocuments or 0),
  }
  for _, job in ipairs(result.jobs or {}) do
    table.insert(lines, ('job %s: %s'):format(job.id or '?', job.title or ''))
  end
  vim.list_extend(lines, M.change_lines(result.changes))
  M.last_status = result
  vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
end

--- Reloads the buffers, not modified, whose files changed on disk (a
--- command the agent ran wrote them). Neovim looks only on focus or after
--- a shell command, and the server reads an open file from its buffer: a
--- stale one would show the user the old text and make undo see an edit
--- that is not there. A modified buffer is left as it is.
function M.reload_changed_buffers()
  local uv = vim.uv or vim.loop
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == '' and not vim.bo[b].modified
      and name ~= '' and uv.fs_stat(name) then
      vim.api.nvim_buf_call(b, function()
        -- 'autoread' for this look only: reload without asking.
        vim.cmd('setlocal autoread')
        pcall(vim.cmd, 'checktime ' .. b)
        vim.cmd('set autoread<')
      end)
    end
  end
end

M.subcommands = {
  ask = function(args, cmd)
    if #args == 0 then
      return M.ask(cmd)
    end
    agent(table.concat(args, ' '), cmd)
  end,
  fix = function(args, cmd)
    agent_action('quickfix', #args > 0 and table.concat(args, ' ') or nil, cmd)
  end,
  explain = function(args, cmd)
    agent_action('refactor.warden.explain', #args > 0 and table.concat(args, ' ') or nil, cmd)
  end,
  run = function(args)
    if #args == 0 then
      return notify('usage: :Warden run {command} [args...]', vim.log.levels.ERROR)
    end
    local root = warden().root_dir(vim.api.nvim_get_current_buf())
    local out = require('warden.output')
    local run = out.start(args)
    local notify_started = started('run')
    warden().execute('warden.exec', { { command = args, cwd = root } }, function(err, result)
      out.started(run, type(result) == 'table' and result.jobId, err)
      notify_started(err, result)
    end)
  end,
  cancel = function(args)
    warden().execute('warden.agent.cancel', args[1] and { { jobId = args[1] } } or {}, function(err, res)
      if err then
        notify('cancel failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      elseif res and res.cancelled and #res.cancelled > 0 then
        notify('cancelled ' .. table.concat(res.cancelled, ', '))
      else
        notify('no agent job was running')
      end
    end)
  end,
  -- :Warden undo [steps] [force]: steps goes back more than one change;
  -- force reverts files edited since (the server refuses otherwise).
  undo = function(args)
    M.reload_changed_buffers()
    local arg = {}
    for _, a in ipairs(args) do
      local steps = tonumber(a)
      if a == 'force' then
        arg.force = true
      elseif steps and steps >= 1 and steps == math.floor(steps) then
        arg.steps = steps
      else
        return notify('usage: :Warden undo [steps] [force]', vim.log.levels.ERROR)
      end
    end
    warden().execute('warden.undo', next(arg) and { arg } or {}, started('undo'))
  end,
  status = function()
    warden().execute('warden.status', {}, show_status)
  end,
  policy = function(args)
    local usage = 'usage: :Warden policy {' .. table.concat(policies, '|') .. '}'
      .. ' (granular takes the categories it rejects: ' .. table.concat(granular_categories, ' ') .. ')'
    local policy = args[1]
    if not vim.tbl_contains(policies, policy or '') or (#args > 1 and policy ~= 'granular') then
      return notify(usage, vim.log.levels.ERROR)
    end
    local arg = { approvalPolicy = policy }
    if policy == 'granular' then
      local reject = vim.list_slice(args, 2)
      for _, c in ipairs(reject) do
        if not vim.tbl_contains(granular_categories, c) then
          return notify(('unknown granular category %q; %s'):format(c, usage), vim.log.levels.ERROR)
        end
      end
      -- Without categories the configured granular_reject list stays.
      if #reject > 0 then
        arg.granularReject = reject
      end
    end
    warden().execute('warden.policy.set', { arg }, function(err)
      if err then
        notify('policy not changed: ' .. (err.message or ''), vim.log.levels.ERROR)
      elseif policy == 'granular' then
        local reject = arg.granularReject or {}
        notify('approval policy is now granular' .. (#reject > 0 and (', rejecting ' .. table.concat(reject, ', ')) or ''))
      else
        notify('approval policy is now ' .. policy)
      end
    end)
  end,
}

local names = vim.tbl_keys(M.subcommands)
table.sort(names)
M.names = names

function M.run(cmd)
  local args = vim.deepcopy(cmd.fargs)
  local sub = table.remove(args, 1)
  local fn = sub and M.subcommands[sub]
  if not fn then
    return notify(('usage: :Warden {%s}'):format(table.concat(names, '|')), vim.log.levels.ERROR)
  end
  fn(args, cmd)
end

function M.complete(arglead, cmdline)
  local words = vim.split(cmdline:sub(1, #cmdline - #arglead), '%s+', { trimempty = true })
  local candidates = names
  if #words == 2 and words[2] == 'policy' then
    candidates = policies
  elseif #words >= 3 and words[2] == 'policy' and words[3] == 'granular' then
    candidates = granular_categories
  elseif #words == 2 and words[2] == 'undo' then
    candidates = { 'force' }
  elseif #words >= 2 and words[2] == 'run' then
    return vim.fn.getcompletion(arglead, #words == 2 and 'shellcmd' or 'file')
  elseif #words ~= 1 then
    return {}
  end
  return vim.tbl_filter(function(n)
    return n:sub(1, #arglead) == arglead
  end, candidates)
end

--- :WardenAsk — prompts with vim.ui.input, then runs the agent on it.
function M.ask(cmd)
  agent(cmd and cmd.fargs and #cmd.fargs > 0 and table.concat(cmd.fargs, ' ') or nil, cmd)
end

return M
