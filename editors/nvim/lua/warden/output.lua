-- :Warden run's output: the server sends a warden.exec command's output as
-- window/logMessage lines prefixed "[warden.exec] " and its outcome as the
-- job's closing $/progress message. Both are appended to one scratch buffer,
-- warden://output, shown in a split, one "$ command" block per run.
local M = {}

local prefix = '[warden.exec] '
local bufname = 'warden://output'

-- The runs whose job has not ended yet, oldest first. Output lines go to the
-- newest: the server does not say which job a line belongs to.
local open_runs = {}

--- The output buffer (created when needed).
function M.buf()
  local b = vim.fn.bufnr(bufname)
  if b ~= -1 and vim.api.nvim_buf_is_valid(b) then
    return b
  end
  b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, bufname)
  vim.bo[b].bufhidden = 'hide'
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = false
  return b
end

local function append(lines)
  local b = M.buf()
  vim.bo[b].modifiable = true
  local empty = vim.api.nvim_buf_line_count(b) == 1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == ''
  vim.api.nvim_buf_set_lines(b, empty and 0 or -1, -1, false, lines)
  vim.bo[b].modifiable = false
  for _, win in ipairs(vim.fn.win_findbuf(b)) do
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(b), 0 })
  end
end

-- Shows the buffer in a split at the bottom unless a window shows it already.
local function show()
  local b = M.buf()
  if #vim.fn.win_findbuf(b) > 0 then
    return
  end
  local cur = vim.api.nvim_get_current_win()
  vim.cmd('botright 10split')
  vim.api.nvim_win_set_buf(0, b)
  vim.api.nvim_set_current_win(cur)
end

--- Starts a run block for argv; returns the run, to be given its jobId.
function M.start(argv)
  local run = { argv = argv }
  table.insert(open_runs, run)
  append({ '$ ' .. table.concat(argv, ' ') })
  show()
  return run
end

--- The run's job id is known (executeCommand's answer), or it failed.
function M.started(run, job_id, err)
  if err then
    M.finish(run, 'not started: ' .. (err.message or vim.inspect(err)))
  else
    run.token = 'warden-job-' .. tostring(job_id)
  end
end

function M.finish(run, message)
  for i, r in ipairs(open_runs) do
    if r == run then
      table.remove(open_runs, i)
      break
    end
  end
  append({ '[' .. (message or 'done'):gsub('^Warden:%s*', '') .. ']', '' })
end

--- Called by the progress handler when a job ends.
function M.job_ended(token, message)
  for _, r in ipairs(open_runs) do
    if r.token == tostring(token) then
      return M.finish(r, message)
    end
  end
end

-- How each of the agent's commands ended ("Warden: agent: `cmd` exited 0
-- (sandboxed, 1.2s)"): said in :messages too, so a model's "tests pass" can
-- be checked against the exit statuses.
local outcome = 'Warden: agent: `'

--- window/logMessage: output lines of a run go to the buffer, the agent's
--- command outcomes to :messages; everything still reaches Neovim's own
--- handler (:LspLog).
function M.log_handler(err, result, ctx, config)
  local msg = result and result.message
  if type(msg) == 'string' and msg:sub(1, #prefix) == prefix and #open_runs > 0 then
    append(vim.split(msg:sub(#prefix + 1), '\n', { plain = true }))
  elseif type(msg) == 'string' and msg:sub(1, #outcome) == outcome then
    vim.notify(msg, result.type == 2 and vim.log.levels.WARN or vim.log.levels.INFO)
  end
  local default = vim.lsp.handlers['window/logMessage']
  if default then
    return default(err, result, ctx, config)
  end
end

return M
