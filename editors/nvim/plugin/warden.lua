-- Warden: commands only; nothing starts until require('warden').setup{} runs
-- or a command is used. Everything else loads lazily from lua/warden.
if vim.g.loaded_warden then
  return
end
vim.g.loaded_warden = true

vim.api.nvim_create_user_command('Warden', function(cmd)
  require('warden.commands').run(cmd)
end, {
  nargs = '*',
  range = true,
  desc = 'Warden: ask|fix|explain|run|cancel|undo|status|policy',
  complete = function(...)
    return require('warden.commands').complete(...)
  end,
})

vim.api.nvim_create_user_command('WardenAsk', function(cmd)
  require('warden.commands').ask(cmd)
end, { nargs = '*', range = true, desc = 'Warden: ask the agent to do something' })

vim.api.nvim_create_user_command('WardenReview', function(cmd)
  require('warden.review').command(cmd.fargs[1])
end, {
  nargs = 1,
  desc = 'Warden: decide the open patch review',
  complete = function()
    return require('warden.review').subcommands
  end,
})
