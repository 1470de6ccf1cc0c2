-- Warden's own files (a session transcript, the audit log, config.toml) get
-- no Warden client: its workspace would be Warden's own state or config
-- directory. Its records open read-only; its config stays editable.
local H = require('helpers')

local function clients_of(buf)
  return vim.tbl_filter(function(c)
    return c.name == 'warden'
  end, vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.tbl_values(vim.lsp.buf_get_clients(buf)))
end

H.run("Warden's own files: no client, records read-only", function()
  local ws = H.workspace({ ['main.go'] = 'package main' })
  H.setup()
  local env = require('warden').config.cmd_env
  local transcript = env.XDG_STATE_HOME .. '/warden/sessions/2026-01-01T000000.jsonl'
  vim.fn.mkdir(vim.fn.fnamemodify(transcript, ':h'), 'p')
  vim.fn.writefile({ '{"kind":"task","text":"fix it"}' }, transcript)
  local config = env.XDG_CONFIG_HOME .. '/warden/config.toml'
  vim.fn.writefile({ 'approval_policy = "on-request"' }, config)

  -- Alone: opening the transcript starts no server at all.
  vim.cmd('edit ' .. vim.fn.fnameescape(transcript))
  local tbuf = vim.api.nvim_get_current_buf()
  vim.wait(500)
  H.eq(0, #require('warden').clients(), 'no Warden client for a transcript')
  H.eq(true, vim.bo[tbuf].readonly, 'the transcript is read-only')
  H.eq(false, vim.bo[tbuf].modifiable, 'the transcript cannot be edited')
  local _, err = require('warden').attach(tbuf)
  H.contains(err or '', "Warden's own state directory", ':Warden on a transcript says why not')

  -- Beside a workspace: the workspace's client never attaches to it.
  local client = H.open(ws .. '/main.go')
  vim.cmd('edit ' .. vim.fn.fnameescape(transcript))
  vim.wait(300)
  H.eq(0, #clients_of(vim.api.nvim_get_current_buf()), 'no client on the transcript')
  H.eq(1, #require('warden').clients(), 'no second Warden rooted at its state directory')
  H.eq(ws, client.config.root_dir, 'the one client is the workspace')

  -- config.toml: no client either, but the user edits it.
  vim.cmd('edit ' .. vim.fn.fnameescape(config))
  vim.wait(300)
  local cbuf = vim.api.nvim_get_current_buf()
  H.eq(0, #clients_of(cbuf), 'no client on config.toml')
  H.eq(true, vim.bo[cbuf].modifiable and not vim.bo[cbuf].readonly, 'config.toml stays editable')

  -- vim.lsp.enable's config (lsp/warden.lua) finds no root for them either.
  local cfg = dofile(vim.api.nvim_get_runtime_file('lsp/warden.lua', false)[1])
  local roots = {}
  for _, buf in ipairs({ tbuf, cbuf, vim.fn.bufnr(ws .. '/main.go') }) do
    cfg.root_dir(buf, function(root)
      table.insert(roots, root)
    end)
  end
  H.eq({ ws }, roots, 'lsp/warden.lua roots only the workspace file')
end)
