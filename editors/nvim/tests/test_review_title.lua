-- The review tab reads as a title: its windows' buffers are named after the
-- file and its place in the review, with no path for the tab line to
-- shorten into "w//2/p/stats.go".
local H = require('helpers')

H.run('patch review: a readable tab title', function()
  local ws = H.workspace({ ['sub/stats.go'] = 'package sub\n\nvar n = 1', ['main.go'] = 'package main' })
  H.setup()
  H.open(ws .. '/main.go')
  local seen
  H.on_review(function(s)
    local function name(buf)
      return vim.fn.bufname(buf)
    end
    seen = {
      tab = name(vim.api.nvim_win_get_buf(vim.api.nvim_tabpage_get_win(0))),
      current = name(s.items[1].current_buf),
      proposed2 = name(s.items[2].proposed_buf),
      summary = name(s.summary_buf),
    }
    s:reject_all()
  end)
  local res, err = H.execute('warden.patch.apply', {
    {
      patch = table.concat({
        '*** Begin Patch',
        '*** Update File: sub/stats.go',
        '@@',
        '-var n = 1',
        '+var n = 2',
        '*** Add File: notes.txt',
        '+hello',
        '*** End Patch',
        '',
      }, '\n'),
      root = ws,
    },
  })
  H.eq(nil, err, 'warden.patch.apply error')
  H.truthy(res and res.jobId, 'a job was started')
  H.wait(20000, function()
    return seen ~= nil
  end, 'the review to open')
  H.eq('Warden review: stats.go (proposed, 1 of 2)', seen.tab, 'the tab title: the buffer of its current window')
  H.eq(seen.tab, vim.fn.pathshorten(seen.tab), 'nothing for the tab line to shorten')
  H.eq('Warden review: stats.go (current, 1 of 2)', seen.current, 'the current side')
  H.eq('Warden review: notes.txt (proposed, 2 of 2)', seen.proposed2, 'the second file')
  H.eq('Warden review: 2 changes', seen.summary, 'the summary')
  H.eq({ 'package sub', '', 'var n = 1' }, H.read(ws .. '/sub/stats.go'), 'rejected: the file is unchanged')
end)
