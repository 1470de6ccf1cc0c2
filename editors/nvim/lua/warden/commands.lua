-- :Warden {ask|fix|explain|run|cancel|undo|status|policy} and :WardenAsk.
-- Each subcommand becomes one warden.* workspace/executeCommand.
local M = {}

local policies = { 'untrusted', 'on-failure', 'on-request', 'never' }

local function warden()
  return require('warden')
end

local function notify(msg, level)
  vim.notify('Warden: ' .. msg, level or vim.log.levels.INFO)
end

-- Where the command applies: the buffer's URI and the range (the visual
-- selection when :'<,'>Warden was used, else the cursor line), as LSP wants.
local function location(cmd)
  local bufnr = vim.api.nvim_get_current_buf()
  local first, last
  if cmd and cmd.range and cmd.range > 0 then
    first, last = cmd.line1 - 1, cmd.line2 - 1
  else
    local row = vim.api.nvim_win_get_cursor(0)[1] - 1
    first, last = row, row
  end
  local last_line = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1] or ''
  return {
    uri = vim.uri_from_bufnr(bufnr),
    range = {
      start = { line = first, character = 0 },
      ['end'] = { line = last, character = #last_line },
    },
  }
end

local function started(label)
  return function(err, result)
    if err then
      notify(label .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif type(result) == 'table' and result.jobId then
      notify(('%s started (job %s)'):format(label, result.jobId))
    end
  end
end

local function agent(mode, instruction, cmd)
  local loc = location(cmd)
  local arg = { mode = mode, instruction = instruction, uri = loc.uri, range = loc.range }
  if mode == 'fix' then
    arg.diagnostics = vim.tbl_map(function(d)
      return d.user_data and d.user_data.lsp or {
        range = {
          start = { line = d.lnum, character = d.col },
          ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
        },
        message = d.message,
        severity = d.severity,
        source = d.source,
      }
    end, vim.diagnostic.get(0, { lnum = loc.range.start.line }))
  end
  warden().execute('warden.agent.run', { arg }, started('agent ' .. mode))
end

local function show_status(_, result)
  if type(result) ~= 'table' then
    return
  end
  local lines = {
    ('warden %s'):format(result.version or '?'),
    ('policy: approval %s, sandbox %s%s'):format(
      result.policy and result.policy.approvalPolicy or '?',
      result.policy and result.policy.sandboxMode or '?',
      result.policy and result.policy.networkAccess and ', network on' or ''
    ),
    ('model: %s'):format(result.model and result.model.configured and (result.model.name .. (result.model.baseURL and (' at ' .. result.model.baseURL) or '')) or 'not configured'),
    ('open documents: %d'):format(result.openDocuments or 0),
  }
  for _, job in ipairs(result.jobs or {}) do
    table.insert(lines, ('job %s: %s'):format(job.id or '?', job.title or ''))
  end
  M.last_status = result
  vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
end

M.subcommands = {
  ask = function(args, cmd)
    if #args == 0 then
      return M.ask(cmd)
    end
    agent('ask', table.concat(args, ' '), cmd)
  end,
  fix = function(args, cmd)
    agent('fix', #args > 0 and table.concat(args, ' ') or nil, cmd)
  end,
  explain = function(args, cmd)
    agent('explain', #args > 0 and table.concat(args, ' ') or nil, cmd)
  end,
  run = function(args)
    if #args == 0 then
      return notify('usage: :Warden run {command} [args...]', vim.log.levels.ERROR)
    end
    local root = warden().root_dir(vim.api.nvim_get_current_buf())
    warden().execute('warden.exec', { { command = args, cwd = root } }, started('run'))
  end,
  cancel = function(args)
    warden().execute('warden.agent.cancel', args[1] and { { jobId = args[1] } } or {}, function(err)
      if err then
        notify('cancel failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      else
        notify('cancelled')
      end
    end)
  end,
  undo = function()
    warden().execute('warden.undo', {}, started('undo'))
  end,
  status = function()
    warden().execute('warden.status', {}, show_status)
  end,
  policy = function(args)
    if #args ~= 1 or not vim.tbl_contains(policies, args[1]) then
      return notify('usage: :Warden policy {' .. table.concat(policies, '|') .. '}', vim.log.levels.ERROR)
    end
    warden().execute('warden.policy.set', { { approvalPolicy = args[1] } }, function(err)
      if err then
        notify('policy not changed: ' .. (err.message or ''), vim.log.levels.ERROR)
      else
        notify('approval policy is now ' .. args[1])
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
  if cmd and cmd.fargs and #cmd.fargs > 0 then
    return agent('ask', table.concat(cmd.fargs, ' '), cmd)
  end
  local loc_cmd = cmd and { range = cmd.range, line1 = cmd.line1, line2 = cmd.line2 } or nil
  vim.ui.input({ prompt = 'Warden, please: ' }, function(text)
    if text and vim.trim(text) ~= '' then
      agent('ask', text, loc_cmd)
    end
  end)
end

return M
