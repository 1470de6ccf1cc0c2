if x:   
    call()	
