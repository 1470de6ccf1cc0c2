-- Spellings that changed between Neovim 0.7 and 0.12, in one place, so the
-- plugin calls nothing deprecated on the version it runs on.
local M = {}

M.uv = vim.uv or vim.loop

local buf_key = vim.fn.has('nvim-0.12') == 1 and 'buf' or 'buffer'

--- opts with the buffer under the key this Neovim wants ("buffer" before
--- 0.12, "buf" from 0.12 on) for vim.keymap.set and nvim_create_autocmd.
function M.with_buf(bufnr, opts)
  opts = opts or {}
  opts[buf_key] = bufnr
  return opts
end

--- Highlights bytes [col_start, col_end) of a 0-based line (col_end -1: to
--- the end) with an extmark; nvim_buf_add_highlight is deprecated in 0.11.
function M.highlight(bufnr, ns, group, line, col_start, col_end)
  local text = vim.api.nvim_buf_get_lines(bufnr, line, line + 1, false)[1] or ''
  if col_end < 0 or col_end > #text then
    col_end = #text
  end
  pcall(vim.api.nvim_buf_set_extmark, bufnr, ns, line, math.min(col_start, col_end), {
    end_col = col_end,
    hl_group = group,
  })
end

return M
