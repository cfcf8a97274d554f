#include <immintrin.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <time.h>
typedef struct { uint8_t palette, start; uint8_t res[14]; uint16_t colsb[16]; uint8_t rows[16]; } __attribute__((packed)) Cfg;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static uint32_t *A,*W; static float *M;
#define CH 3
int mode;
static void run(void){
  for(int e=0;e<64;e+=2){
    _tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);
    for(int j=0;j<CH;j++){
      const uint32_t* wa = mode&1 ? W : W + (e*33 + 16*(j==2))*16;
      const uint32_t* wb = mode&1 ? W : W + ((e+1)*33 + 16*(j==2))*16;
      const uint32_t* aa = mode&2 ? A : A + ((e*CH+j)*20)*16;
      const uint32_t* ab = mode&2 ? A : A + (((e+1)*CH+j)*20)*16;
      _tile_loadd(4,wa,64);_tile_loadd(5,wb,64);
      _tile_loadd(6,aa,64);_tile_loadd(7,aa+256,64);
      _tile_dpbf16ps(0,6,4);_tile_dpbf16ps(1,7,4);
      _tile_loadd(6,ab,64);_tile_loadd(7,ab+256,64);
      _tile_dpbf16ps(2,6,5);_tile_dpbf16ps(3,7,5);
    }
    if(!(mode&4)){
    float* me=M+e*16; long st=4160;
    _tile_stored(0,me,st);_tile_stored(1,me+16*1040,st);
    _tile_stored(2,me+16,st);_tile_stored(3,me+16+16*1040,st);}
  }
}
int main(int argc,char**argv){
  syscall(SYS_arch_prctl, 0x1023, 18);
  Cfg c; memset(&c,0,sizeof c); c.palette=1;
  int r[8]={16,4,16,4,16,16,16,4};
  for(int t=0;t<8;t++){c.rows[t]=r[t];c.colsb[t]=64;}
  _tile_loadconfig(&c);
  A=aligned_alloc(64,64*CH*20*64+4096); W=aligned_alloc(64,64*33*64+4096); M=aligned_alloc(64,20*4160+4096);
  memset(A,0,64*CH*20*64); memset(W,0,64*33*64);memset(M,0,20*4160);
  for(mode=0;mode<8;mode++){
    run(); double t0=now(); int N=20000; for(int i=0;i<N;i++) run(); double t=now()-t0;
    printf("mode %d (W const %d, A const %d, no store %d): %.2f us per call, %.2f ns per tdp\n",mode,mode&1,!!(mode&2),!!(mode&4),t/N*1e6,t/N/(64*CH*2)*1e9);
  }
}
