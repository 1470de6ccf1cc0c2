-- Progress of Warden's jobs ($/progress), for require('warden').status().
--
-- Warden's client gets this handler, which records the state and then hands
-- the message to Neovim's own handler, so `User LspProgressUpdate` (0.7) and
-- `LspProgress` (0.10+) still fire for other statusline plugins.
local M = {}

-- token -> {title, message, percentage, done}
local jobs = {}
local order = {}

local function record(value, token)
  local key = tostring(token)
  local job = jobs[key]
  if value.kind == 'begin' then
    -- The server's titles start "Warden: ", which the statusline says once.
    local title = type(value.title) == 'string' and value.title:gsub('^Warden: ', '') or value.title
    job = { title = title, message = value.message, percentage = value.percentage }
    jobs[key] = job
    table.insert(order, key)
  elseif job and value.kind == 'report' then
    job.message = value.message or job.message
    job.percentage = value.percentage or job.percentage
  elseif job and value.kind == 'end' then
    pcall(require('warden.output').job_ended, token, value.message)
    pcall(require('warden.commands').reload_changed_buffers)
    job.done = true
    job.message = value.message or job.message
    M.last_finished = job
    jobs[key] = nil
    for i, k in ipairs(order) do
      if k == key then
        table.remove(order, i)
        break
      end
    end
  end
end

function M.handler(err, result, ctx, config)
  if result and type(result.value) == 'table' then
    record(result.value, result.token)
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = 'WardenProgress', modeline = false })
    vim.schedule(function()
      pcall(vim.cmd, 'redrawstatus!')
    end)
  end
  local default = vim.lsp.handlers['$/progress']
  if default then
    return default(err, result, ctx, config)
  end
end

--- Whether a running job's title starts with prefix (the server's command
--- titles, e.g. "Undoing Warden's last change").
function M.running(prefix)
  for _, key in ipairs(order) do
    local t = jobs[key] and jobs[key].title or ''
    if t:sub(1, #prefix) == prefix then
      return true
    end
  end
  return false
end

--- The newest running job, or nil.
function M.current()
  local key = order[#order]
  return key and jobs[key] or nil
end

--- Statusline text: "warden: <title> <message> (<n>%)" while a job runs,
--- "warden" while a client is attached to the current buffer, else "".
function M.status()
  local job = M.current()
  if job then
    local parts = { 'warden:', job.title or 'working' }
    if job.message and job.message ~= '' then
      table.insert(parts, job.message)
    end
    if job.percentage then
      table.insert(parts, ('(%d%%)'):format(job.percentage))
    end
    return table.concat(parts, ' ')
  end
  local ok, warden = pcall(require, 'warden')
  if ok and warden.client() then
    return 'warden'
  end
  return ''
end

return M
