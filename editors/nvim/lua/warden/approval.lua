-- Approval dialogs: the server's window/showMessageRequest, answered through
-- vim.ui.select so Telescope, fzf-lua, snacks or dressing render it.
--
-- The risk summary is shown in a floating window above the picker, with the
-- risk level highlighted. The handler always returns a value (the chosen
-- action, or vim.NIL when the pick is cancelled), because a nil return makes
-- Neovim send no reply at all and the server would wait for ever.
--
-- On 0.10+ server requests run in a coroutine: the handler yields until the
-- pick is made, so the editor never blocks. On 0.7 a request must be answered
-- before Neovim returns to its loop; vim.ui.select is used when it answers at
-- once (the built-in one and synchronous pickers do), and inputlist() when it
-- does not.
local M = {}

local levels = { high = 'WardenRiskHigh', medium = 'WardenRiskMedium', low = 'WardenRiskLow' }

local function define_highlights()
  vim.api.nvim_set_hl(0, 'WardenRiskHigh', { default = true, link = 'ErrorMsg' })
  vim.api.nvim_set_hl(0, 'WardenRiskMedium', { default = true, link = 'WarningMsg' })
  vim.api.nvim_set_hl(0, 'WardenRiskLow', { default = true, link = 'MoreMsg' })
  vim.api.nvim_set_hl(0, 'WardenApprovalTitle', { default = true, link = 'Title' })
end

--- The risk level named in a dialog's message (low, medium or high), if any.
function M.risk_level(message)
  local lower = message:lower()
  local level = lower:match('risk%s*[:=]?%s*(%a+)') or lower:match('(%a+)%s+risk')
  if level and levels[level] then
    return level
  end
  for _, l in ipairs({ 'high', 'medium', 'low' }) do
    if lower:find('%f[%a]' .. l .. '%f[%A]') then
      return l
    end
  end
end

--- Lines and highlights for a dialog: {lines, highlights = {{group, line, col_start, col_end}}, level}.
--- Line numbers are 0-based, as extmarks take them.
function M.render(params)
  local message = params.message or ''
  local level = M.risk_level(message)
  local lines, hls = {}, {}
  local title = 'Warden asks'
  if level then
    title = title .. ' — ' .. level:upper() .. ' risk'
  end
  table.insert(lines, title)
  table.insert(hls, { 'WardenApprovalTitle', 0, 0, #'Warden asks' })
  if level then
    table.insert(hls, { levels[level], 0, #'Warden asks — ', #title })
  end
  table.insert(lines, '')
  for _, line in ipairs(vim.split(message, '\n', { plain = true })) do
    table.insert(lines, line)
    -- Leaving the sandbox is worth the eye whatever the level.
    for _, loud in ipairs({ 'NOT sandboxed', 'WITHOUT the sandbox' }) do
      local s, e = line:find(loud, 1, true)
      if s then
        table.insert(hls, { 'WardenRiskHigh', #lines - 1, s - 1, e })
      end
    end
    if level then
      local lower = line:lower()
      local s, e = lower:find('%f[%a]' .. level .. '%f[%A]')
      if s then
        table.insert(hls, { levels[level], #lines - 1, s - 1, e })
      end
    end
  end
  return { lines = lines, highlights = hls, level = level }
end

--- Screen rows the lines take in a wrapping window this wide: a long line
--- (a grant's path, a long command) wraps, and a float only as high as the
--- line count would cut the last lines (the risk facts) off.
function M.rows(lines, width)
  local rows = 0
  for _, l in ipairs(lines) do
    rows = rows + math.max(1, math.ceil(vim.fn.strdisplaywidth(l) / width))
  end
  return rows
end

-- The float that shows the whole message while the picker asks.
local function open_float(view)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, view.lines)
  local ns = vim.api.nvim_create_namespace('warden_approval')
  for _, h in ipairs(view.highlights) do
    require('warden.compat').highlight(buf, ns, h[1], h[2], h[3], h[4])
  end
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  local width = 20
  for _, l in ipairs(view.lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width, math.max(20, vim.o.columns - 4))
  local height = math.min(M.rows(view.lines, width), math.max(1, vim.o.lines - 8))
  local ok, win = pcall(vim.api.nvim_open_win, buf, false, {
    relative = 'editor',
    row = 1,
    col = math.max(0, math.floor((vim.o.columns - width) / 2) - 1),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    focusable = false,
    zindex = 60,
  })
  if not ok then
    return nil
  end
  vim.wo[win].wrap = true
  return win
end

local function close_float(win)
  if win and vim.api.nvim_win_is_valid(win) then
    pcall(vim.api.nvim_win_close, win, true)
  end
end

-- inputlist() fallback for 0.7 with an asynchronous picker.
local function inputlist(params)
  local choices = { 'Warden: choose (Esc denies)' }
  for i, a in ipairs(params.actions) do
    table.insert(choices, ('%d. %s'):format(i, a.title))
  end
  local n = vim.fn.inputlist(choices)
  return params.actions[n]
end

--- The last dialog shown, for :checkhealth-style inspection and tests.
M.last = nil

function M.handler(_, params, ctx)
  params = params or {}
  local actions = params.actions or {}
  if #actions == 0 then
    -- Nothing to choose: show the message and answer null, never a Lua error.
    vim.notify('Warden: ' .. (params.message or ''), vim.log.levels.INFO)
    return vim.NIL
  end
  define_highlights()
  local view = M.render(params)
  M.last = { params = params, view = view, client_id = ctx and ctx.client_id }
  local float = open_float(view)
  M.last.win = float
  pcall(vim.cmd, 'redraw')

  local first = vim.split(params.message or '', '\n', { plain = true })[1]:gsub('^Warden:%s*', '')
  local opts = {
    prompt = 'Warden: ' .. first,
    kind = 'warden.approval',
    format_item = function(a)
      return a.title
    end,
  }
  local co = coroutine.running()
  local answered, choice = false, nil
  local ok, err = pcall(vim.ui.select, actions, opts, function(item)
    if answered then
      if not co then
        vim.notify('Warden: that question was already answered in the prompt', vim.log.levels.WARN)
      end
      return
    end
    answered, choice = true, item
    if co and coroutine.status(co) == 'suspended' then
      coroutine.resume(co)
    end
  end)
  if not ok then
    vim.notify('Warden: the picker failed (' .. tostring(err) .. '); denying', vim.log.levels.ERROR)
    answered = true
  end
  if not answered then
    if co then
      coroutine.yield()
    else
      answered, choice = true, inputlist(params)
    end
  end
  close_float(float)
  M.last.choice = choice
  if choice == nil then
    return vim.NIL
  end
  return choice
end

return M
