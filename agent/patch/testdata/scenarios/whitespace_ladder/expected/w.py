if x:   
    call(1)
