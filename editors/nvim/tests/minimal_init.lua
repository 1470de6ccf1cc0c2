-- Minimal init for the headless tests: only Neovim's runtime and this plugin.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
-- A relocatable build keeps its tree-sitter parsers in <prefix>/lib/nvim
-- (0.11+ ftplugins start tree-sitter), and netrw is a package under
-- $VIMRUNTIME from 0.11 on: both must stay reachable.
local rtp = { root, vim.env.VIMRUNTIME }
local lib = vim.fn.fnamemodify(vim.v.progpath, ':p:h:h') .. '/lib/nvim'
if vim.fn.isdirectory(lib .. '/parser') == 1 then
  table.insert(rtp, lib)
end
vim.opt.runtimepath = rtp
vim.opt.packpath = { vim.env.VIMRUNTIME }
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.more = false
package.path = root .. '/tests/?.lua;' .. package.path
vim.cmd('runtime plugin/warden.lua')
